package appkinds

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/valuesschema"
	"cozystack.io/platform/internal/appschema"
)

// Group and Version of the application API.
const (
	Group   = "apps.cozystack.io"
	Version = "v1alpha1"
)

// HelmReleaseNameMaxLength is Helm's limit on release names; the HelmRelease
// of an application is named <prefix><name> and installs a release of the
// same name.
const HelmReleaseNameMaxLength = 53

// Kind is one served kind, compiled from an ApplicationDefinition.
type Kind struct {
	// Definition is the AD's name; UID, Generation and Created identify the
	// AD version this kind was compiled from.
	Definition string
	UID        types.UID
	Generation int64
	Created    metav1.Time
	// ResourceVersion is the AD's when this kind was compiled. ADs and
	// HelmReleases are stored in one etcd, so their resourceVersions are
	// one sequence: a HelmRelease resourceVersion below it was read
	// before this definition of the kind existed (the storage answers a
	// watch from there with 410 Gone; contract K1, "Lifecycle of a kind").
	ResourceVersion string

	Kind       string
	ListKind   string
	Singular   string
	Plural     string
	ShortNames []string

	// Schema is the compiled spec (values) schema.
	Schema *appschema.Schema
	// Release holds the HelmRelease settings of the kind.
	Release Release
	// MaxNameLength is the longest application name whose HelmRelease name
	// fits HelmReleaseNameMaxLength (and a DNS-1035 label).
	MaxNameLength int
	// Notes are non-fatal findings, reported in the Served condition.
	Notes []string
	// Terminating is true when the AD is deleted and waits for the
	// applications of its kind to go (v1alpha1.FinalizerApplications): the
	// kind is served, but no application of it can be created.
	Terminating bool
	// Incumbent is true when the AD's status says it already serves this
	// plural: in a name conflict the incumbent keeps it, so a newcomer never
	// takes a kind away from its users, even across restarts.
	Incumbent bool
	// Secrets is the AD's spec.secrets: which Secrets of an application's
	// release its tenant reads as TenantSecrets (core.cozystack.io).
	Secrets v1alpha1.ApplicationDefinitionResources
}

// TenantKind and TenantComponent name the platform's Tenant application
// (platform/applicationdefinitions/tenant.yaml): only with release.source
// v1alpha1.PlatformSource does it install as the Tenant chart's identity.
const (
	TenantKind      = "Tenant"
	TenantComponent = "tenant"
)

// Release is how an application of the kind becomes a HelmRelease.
type Release struct {
	Prefix         string
	Labels         map[string]string
	ChartRef       v1alpha1.ChartRef
	InstallTimeout *metav1.Duration
	UpgradeTimeout *metav1.Duration
	InstallRetries *int
	UpgradeRetries *int
	// ServiceAccountName is the ServiceAccount of the application's
	// namespace its HelmRelease installs as (contract K5, "Tenant
	// roles"): v1alpha1.TenantInstallerServiceAccount for the platform's
	// own Tenant chart, the installer of the catalog that serves the chart
	// (v1alpha1.CatalogInstallerServiceAccount(release.source)) for every
	// other, and v1alpha1.InstallerServiceAccount (Helm's storage only)
	// for a chart named by chartRef, which belongs to no catalog.
	ServiceAccountName string
	// Catalog is the PackageSource whose installer ServiceAccountName is
	// (release.source), "" for the Tenant chart and a chart named by
	// chartRef: a new application's release records go to
	// v1alpha1.ApplicationReleaseStorageNamespace(namespace, Catalog).
	Catalog string
	// InstallDisableWait and UpgradeDisableWait skip Helm's wait.
	InstallDisableWait bool
	UpgradeDisableWait bool
}

// Failure says why an AD is not served: a CamelCase reason and a message a
// person can act on.
type Failure struct {
	Reason  string
	Message string
}

func (f *Failure) Error() string { return f.Reason + ": " + f.Message }

var (
	prefixPattern = regexp.MustCompile(`^([a-z]([-a-z0-9]*)?)?$`)
	kindPattern   = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
)

// Compile checks one AD on its own and compiles its kind.
func Compile(ad *v1alpha1.ApplicationDefinition) (*Kind, *Failure) {
	app := ad.Spec.Application
	k := &Kind{
		Definition: ad.Name, UID: ad.UID, Generation: ad.Generation, Created: ad.CreationTimestamp, ResourceVersion: ad.ResourceVersion,
		Kind: app.Kind, ListKind: app.Kind + "List", Singular: app.Singular, Plural: app.Plural,
		ShortNames: app.ShortNames, Terminating: !ad.DeletionTimestamp.IsZero(),
		Secrets: *ad.Spec.Secrets.DeepCopy(),
	}
	if f := checkNames(app); f != nil {
		return nil, f
	}
	if c := apimeta.FindStatusCondition(ad.Status.Conditions, v1alpha1.ConditionServed); c != nil &&
		c.Status == metav1.ConditionTrue && ad.Status.Resource == app.Plural {
		k.Incumbent = true
	}
	schema, err := appschema.Compile(app.OpenAPISchema)
	if oe := (*valuesschema.OpenAPIError)(nil); errors.As(err, &oe) {
		return nil, &Failure{Reason: v1alpha1.ReasonUnpublishableSchema, Message: err.Error()}
	}
	if err != nil {
		return nil, &Failure{Reason: v1alpha1.ReasonInvalidSchema, Message: err.Error()}
	}
	k.Schema = schema

	rel := ad.Spec.Release
	if !prefixPattern.MatchString(rel.Prefix) {
		return nil, &Failure{Reason: v1alpha1.ReasonInvalidPrefix, Message: fmt.Sprintf(
			"spec.release.prefix %q must be lowercase letters, digits and '-', starting with a letter, so that <prefix><name> is a valid release name", rel.Prefix)}
	}
	k.MaxNameLength = min(HelmReleaseNameMaxLength-len(rel.Prefix), validation.DNS1035LabelMaxLength)
	if k.MaxNameLength < 1 {
		return nil, &Failure{Reason: v1alpha1.ReasonInvalidPrefix, Message: fmt.Sprintf(
			"spec.release.prefix %q is %d characters and leaves no room for a name within Helm's %d-character release-name limit; shorten the prefix",
			rel.Prefix, len(rel.Prefix), HelmReleaseNameMaxLength)}
	}
	k.Release = Release{Prefix: rel.Prefix, Labels: rel.Labels}
	switch {
	case rel.ChartRef != nil:
		k.Release.ChartRef = *rel.ChartRef
	case rel.Source != "" && rel.Component != "":
		k.Release.ChartRef = v1alpha1.ChartRef{
			Kind:      "ExternalArtifact",
			Name:      v1alpha1.ComponentArtifactName(rel.Source, rel.Component),
			Namespace: v1alpha1.SystemNamespace,
		}
	default:
		return nil, &Failure{Reason: v1alpha1.ReasonInvalidRelease, Message: "spec.release needs chartRef, or source and component naming a PackageSource component"}
	}
	k.Release.ServiceAccountName = v1alpha1.InstallerServiceAccount
	if rel.Source != "" {
		k.Release.ServiceAccountName = v1alpha1.CatalogInstallerServiceAccount(rel.Source)
		k.Release.Catalog = rel.Source
	}
	if k.Kind == TenantKind && rel.Source == v1alpha1.PlatformSource && rel.Component == TenantComponent {
		k.Release.ServiceAccountName = v1alpha1.TenantInstallerServiceAccount
		k.Release.Catalog = ""
	}
	if in := rel.Install; in != nil {
		k.Release.InstallTimeout, k.Release.InstallRetries, k.Release.InstallDisableWait = in.Timeout, in.Retries, in.DisableWait
	}
	if up := rel.Upgrade; up != nil {
		k.Release.UpgradeTimeout, k.Release.UpgradeRetries, k.Release.UpgradeDisableWait = up.Timeout, up.Retries, up.DisableWait
	}
	if f := applyAnnotations(ad.Annotations, &k.Release); f != nil {
		return nil, f
	}
	if len(rel.HealthCheckExprs) > 0 {
		k.Notes = append(k.Notes, "spec.release.healthCheckExprs is ignored: the pinned helm-controller (v1.4.0) has no HelmRelease spec.healthCheckExprs")
	}
	return k, nil
}

func checkNames(app v1alpha1.ApplicationDefinitionApplication) *Failure {
	bad := func(field, value, rule string) *Failure {
		return &Failure{Reason: v1alpha1.ReasonInvalidNames, Message: fmt.Sprintf("spec.application.%s %q %s", field, value, rule)}
	}
	if !kindPattern.MatchString(app.Kind) {
		return bad("kind", app.Kind, "must be CamelCase letters and digits, starting with an upper-case letter")
	}
	for _, n := range []struct{ field, value string }{{"plural", app.Plural}, {"singular", app.Singular}} {
		if errs := validation.IsDNS1035Label(n.value); len(errs) > 0 {
			return bad(n.field, n.value, "must be a DNS-1035 label: "+strings.Join(errs, "; "))
		}
	}
	return nil
}

// applyAnnotations applies the per-kind release annotations (K1) over the
// spec's settings.
func applyAnnotations(ann map[string]string, r *Release) *Failure {
	duration := func(key string) (*metav1.Duration, *Failure) {
		v, ok := ann[key]
		if !ok {
			return nil, nil
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, &Failure{Reason: v1alpha1.ReasonInvalidAnnotation, Message: fmt.Sprintf(
				"annotation %s: %q is not a positive duration such as 15m or 1h30m; fix or remove the annotation", key, v)}
		}
		return &metav1.Duration{Duration: d}, nil
	}
	if d, f := duration(v1alpha1.AnnotationHelmInstallTimeout); f != nil {
		return f
	} else if d != nil {
		r.InstallTimeout = d
	}
	if d, f := duration(v1alpha1.AnnotationHelmUpgradeTimeout); f != nil {
		return f
	} else if d != nil {
		r.UpgradeTimeout = d
	}
	if v, ok := ann[v1alpha1.AnnotationHelmInstallDisableWait]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return &Failure{Reason: v1alpha1.ReasonInvalidAnnotation, Message: fmt.Sprintf(
				"annotation %s: %q is not a boolean; use \"true\" or \"false\", or remove the annotation", v1alpha1.AnnotationHelmInstallDisableWait, v)}
		}
		r.InstallDisableWait = b
	}
	return nil
}

// ValidateName checks an application name for kind k: a DNS-1035 label
// short enough that <prefix><name> fits Helm's release-name limit. The
// messages state the maximum for this kind.
func (k *Kind) ValidateName(name string) []string {
	errs := validation.IsDNS1035Label(name)
	if len(name) > k.MaxNameLength {
		errs = append(errs, fmt.Sprintf("must be no more than %d characters for kind %s: its HelmRelease is named %q + name and Helm release names are limited to %d characters",
			k.MaxNameLength, k.Kind, k.Release.Prefix, HelmReleaseNameMaxLength))
	}
	return errs
}

// HelmReleaseName is the HelmRelease name of application name.
func (k *Kind) HelmReleaseName(name string) string { return k.Release.Prefix + name }

// ApplicationName is the inverse of HelmReleaseName; ok is false when the
// HelmRelease name does not carry the kind's prefix.
func (k *Kind) ApplicationName(helmReleaseName string) (string, bool) {
	if !strings.HasPrefix(helmReleaseName, k.Release.Prefix) || len(helmReleaseName) == len(k.Release.Prefix) {
		return "", false
	}
	return strings.TrimPrefix(helmReleaseName, k.Release.Prefix), true
}
