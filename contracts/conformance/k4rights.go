package conformance

// K4-application-rights: an application chart renders only what its
// release may create. Every application release installs as its catalog's
// installer ServiceAccount in the tenant namespace
// (v1alpha1.CatalogInstallerServiceAccount), which holds, through a
// RoleBinding there, exactly the rules its catalog declares in
// applications[].rules (artifact.CheckApplicationRules) and what Helm
// needs to store a release. So an object the chart renders
// fails the install with "forbidden" when it is cluster-scoped, in
// another namespace, or of a resource the rules do not grant with the
// verbs Helm uses; so does an object Helm's readiness wait reads more
// for, as the same installer (waitReads: a Deployment's ReplicaSets),
// when the rules do not grant those with readVerbs.
//
// The rule renders each application chart as Helm would install it: its
// default values (values.yaml and its dependencies') with the K2 values of
// exampleK2, in namespace rightsNamespace, without a cluster (lookup finds
// nothing, Capabilities are Helm's defaults), and the CRDs of its crds/
// directories, which Helm creates first. A kind maps to its resource and
// scope through Kubernetes' built-in types (client-go's scheme, with the
// cluster-scoped kinds of clusterScopedKinds) and the CRDs the catalog's
// charts ship in crds/; a kind neither knows is checked with the plural
// Kubernetes would guess, and reported. Branches the defaults do not take
// are not rendered: a kind only they render is the catalog's tests' to
// cover (sdk/charttest renders every case against a real API server).
//
// The platform's own Tenant application (v1alpha1.PlatformSource,
// component "tenant") installs as v1alpha1.TenantInstallerServiceAccount,
// with rights the platform grants itself, and is not checked.

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
)

// rightsRule is the rule's ID.
const rightsRule = "K4-application-rights"

// rightsNamespace is the tenant namespace the rule renders releases in.
const rightsNamespace = "tenant-example"

// platformTenantApp and platformTenantKind name the application of the
// platform's catalog that installs as the Tenant chart's identity
// (platform/catalog.yaml).
const (
	platformTenantApp  = "tenant"
	platformTenantKind = "Tenant"
)

// helmVerbs are the verbs a release's installer needs on every resource
// its chart renders: Helm reads the object (get; list and watch to wait
// for it), creates it, patches or replaces it on upgrade and deletes it on
// uninstall.
var helmVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

// readVerbs are the verbs asked for a resource Helm reads but the chart
// does not render.
var readVerbs = []string{"get", "list", "watch"}

// waitReads returns the resources Helm's readiness wait reads, as the
// release's installer, to decide that an object of gvk is ready, beyond
// the object itself (helm.sh/helm/v3 pkg/kube ready.go, ReadyChecker; the
// wait helm-controller runs unless the release says disableWait): a
// Deployment's ReplicaSets (deploymentutil.GetNewReplicaSet lists them),
// the Pods of a ReplicaSet or a ReplicationController. Pods, Jobs,
// StatefulSets, DaemonSets, PersistentVolumeClaims and Services are read
// themselves only.
func waitReads(gvk schema.GroupVersionKind) []schema.GroupResource {
	switch gvk.GroupKind() {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}, schema.GroupKind{Group: "extensions", Kind: "Deployment"}:
		return []schema.GroupResource{{Group: "apps", Resource: "replicasets"}}
	case schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}, schema.GroupKind{Group: "extensions", Kind: "ReplicaSet"}, schema.GroupKind{Kind: "ReplicationController"}:
		return []schema.GroupResource{{Resource: "pods"}}
	}
	return nil
}

// checkApplicationRights applies the rule to every application of the
// catalog; skipped says which applications it left out, and why.
func checkApplicationRights(src *Source, charts chartSet) (out []Finding, skipped []string) {
	cat := src.Catalog
	if cat == nil || len(cat.Applications) == 0 {
		return nil, nil
	}
	mapper := newKindMapper(src.Charts)
	for i, app := range cat.Applications {
		c := charts.get(app.Chart)
		if c == nil {
			continue // CAT-chart reported it
		}
		if cat.Name == v1alpha1.PlatformSource && app.Name == platformTenantApp && app.Kind == platformTenantKind {
			skipped = append(skipped, fmt.Sprintf("%s: applications[%d] (%s) is the platform's Tenant chart, which installs as %s with the rights the platform grants it, not applications[].rules",
				rightsRule, i, app.Name, v1alpha1.TenantInstallerServiceAccount))
			continue
		}
		fs, err := applicationRights(i, app, c, mapper, v1alpha1.CatalogInstallerServiceAccount(cat.Name))
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: applications[%d] (%s): the chart does not render with its default values and the K2 values, so the objects it creates are not checked against applications[%d].rules: %v",
				rightsRule, i, app.Name, i, err))
		}
		out = append(out, fs...)
	}
	return out, skipped
}

// applicationRights checks application i, whose chart is c and whose
// release installs as installer (the catalog's installer ServiceAccount,
// named in messages as its PackageSource would name it if it had the
// catalog's name): one finding
// per object out of the release's reach, and one per resource the rules
// do not grant, at the first object of it, naming every such object.
// A chart that does not render is the error (the template rules and
// Helm's own errors say why; an object created from the schema's defaults
// fails the same way).
func applicationRights(i int, app v1alpha1.PackageApplication, c *loadedChart, mapper kindMapper, installer string) ([]Finding, error) {
	at := fmt.Sprintf("applications[%d].rules", i)
	objs, err := renderChart(c, app.Name+"-example")
	if err != nil {
		return nil, err
	}
	var out []Finding
	// gaps are the resources the rules do not grant, in order of first
	// object, each with the objects that need it.
	var gaps []*gap
	byResource := map[schema.GroupResource]*gap{}
	// rendered are the resources the chart renders that the rules grant.
	rendered := map[schema.GroupResource]bool{}
	for _, o := range objs {
		gvk, name, ns := o.meta()
		f := Finding{RuleID: rightsRule, Severity: Error, File: o.file, Line: kindLine(c, o.file, gvk.Kind), Path: gvk.Kind + "/" + name}
		if gvk.Kind == "" || gvk.Version == "" {
			f.Message = fmt.Sprintf("the chart of application %s renders a document without apiVersion or kind (%s): Helm cannot install it", app.Name, f.Path)
			f.Fix = "give every document of the template apiVersion and kind, or render nothing"
			out = append(out, f)
			continue
		}
		object := fmt.Sprintf("%s %s (%s)", gvk.Kind, name, gvk.GroupVersion())
		resource, clusterScoped, known := mapper.mapping(gvk)
		switch {
		case clusterScoped:
			f.Message = fmt.Sprintf("the chart of application %s renders %s, which is cluster-scoped: an application release installs as its catalog's installer ServiceAccount (%s), which holds rights in its tenant namespace only, so the install fails with forbidden",
				app.Name, object, installer)
			f.Fix = "remove it from the application chart: cluster-wide objects belong in a component of a variant (privileged, with clusterRules), installed once by a Package"
			out = append(out, f)
			continue
		case ns != "" && ns != rightsNamespace:
			f.Message = fmt.Sprintf("the chart of application %s renders %s in namespace %s: the release's installer holds rights in the release's namespace only, so the install fails with forbidden",
				app.Name, object, ns)
			f.Fix = "leave metadata.namespace out, or set it to {{ .Release.Namespace }}"
			out = append(out, f)
		}
		if !known {
			guess, _ := meta.UnsafeGuessKindToResource(gvk)
			resource = guess.Resource
		}
		gr := schema.GroupResource{Group: gvk.Group, Resource: resource}
		if g := byResource[gr]; g != nil {
			g.objects = append(g.objects, gvk.Kind+" "+name)
			continue
		}
		missing := missingVerbs(app.Rules, gvk.Group, resource, helmVerbs)
		if len(missing) == 0 && known {
			rendered[gr] = true
			continue
		}
		g := &gap{at: f, gvk: gvk, resource: resource, known: known, missing: missing, objects: []string{gvk.Kind + " " + name}}
		byResource[gr] = g
		gaps = append(gaps, g)
	}
	out = append(out, waitReadFindings(app, at, objs, rendered, byResource, installer, c)...)
	for _, g := range gaps {
		f := g.at
		objects := fmt.Sprintf("%s (%s)", strings.Join(g.objects, ", "), g.gvk.GroupVersion())
		want := rbacv1.PolicyRule{APIGroups: []string{g.gvk.Group}, Resources: []string{g.resource}, Verbs: helmVerbs}
		refused := artifact.CheckApplicationRules(field.NewPath(at), []rbacv1.PolicyRule{want})
		switch {
		case len(g.missing) == 0: // covered, by a guessed resource
			f.Severity = Warning
			f.Message = fmt.Sprintf("the chart of application %s renders %s, a kind that is neither Kubernetes' nor of a CRD the catalog's charts ship in crds/: %s grant its guessed resource %s, but its real resource and scope are unknown",
				app.Name, objects, at, g.resource)
			f.Fix = fmt.Sprintf("check that %s is the kind's plural (its CRD's spec.names.plural) and that the kind is namespaced; ship the CRD in the crds/ of the catalog's operator chart so that this check knows it", g.resource)
		case len(refused) > 0:
			f.Message = fmt.Sprintf("the chart of application %s renders %s, and no catalog may grant an application %s/%s (%v %s), so the install fails with forbidden",
				app.Name, objects, groupName(g.gvk.Group), g.resource, refused[0].BadValue, refused[0].Detail)
			f.Fix = fmt.Sprintf("render no %s in the application chart: let the application's operator create it, or move it to a component of a variant", g.gvk.Kind)
		default:
			how := "do not grant " + g.resource
			if len(g.missing) < len(helmVerbs) {
				how = fmt.Sprintf("grant %s without the verbs %s", g.resource, strings.Join(g.missing, ", "))
			}
			unknown := ""
			if !g.known {
				unknown = fmt.Sprintf(" (a kind neither Kubernetes' nor of a CRD the catalog ships: its resource is guessed as %s)", g.resource)
			}
			f.Message = fmt.Sprintf("the chart of application %s renders %s%s, and %s %s: the release installs as its catalog's installer ServiceAccount (%s), which holds only the rules this catalog declares, so the install fails with forbidden",
				app.Name, objects, unknown, at, how, installer)
			f.Fix = fmt.Sprintf("add %s to %s in catalog.yaml", ruleYAML(want), at)
			if !g.known {
				f.Fix += fmt.Sprintf(", with the kind's real plural if it is not %s (ship its CRD in the crds/ of an operator chart so that this check knows it)", g.resource)
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// waitReadFindings returns one finding per resource Helm's readiness
// wait reads for the objects of objs (waitReads) that the rules do not
// grant with readVerbs, at the first object that needs it. A resource the
// chart renders itself is checked with helmVerbs already (rendered, when
// granted, or gaps).
func waitReadFindings(app v1alpha1.PackageApplication, at string, objs []renderedObject, rendered map[schema.GroupResource]bool,
	gaps map[schema.GroupResource]*gap, installer string, c *loadedChart) []Finding {
	type need struct {
		at      Finding
		gr      schema.GroupResource
		objects []string
	}
	var needs []*need
	byResource := map[schema.GroupResource]*need{}
	for _, o := range objs {
		gvk, name, _ := o.meta()
		for _, gr := range waitReads(gvk) {
			if rendered[gr] || gaps[gr] != nil {
				continue
			}
			if n := byResource[gr]; n != nil {
				n.objects = append(n.objects, gvk.Kind+" "+name)
				continue
			}
			n := &need{at: Finding{RuleID: rightsRule, Severity: Error, File: o.file, Line: kindLine(c, o.file, gvk.Kind), Path: gvk.Kind + "/" + name},
				gr: gr, objects: []string{gvk.Kind + " " + name}}
			byResource[gr] = n
			needs = append(needs, n)
		}
	}
	var out []Finding
	for _, n := range needs {
		missing := missingVerbs(app.Rules, n.gr.Group, n.gr.Resource, readVerbs)
		if len(missing) == 0 {
			continue
		}
		f := n.at
		want := rbacv1.PolicyRule{APIGroups: []string{n.gr.Group}, Resources: []string{n.gr.Resource}, Verbs: readVerbs}
		f.Message = fmt.Sprintf("the chart of application %s renders %s: Helm waits for it to be ready by reading %s (%s) as the release's installer (%s), and %s do not grant %s the verbs %s, so the install fails with forbidden",
			app.Name, strings.Join(n.objects, ", "), n.gr.Resource, groupName(n.gr.Group), installer, at, n.gr.Resource, strings.Join(missing, ", "))
		f.Fix = fmt.Sprintf("add %s to %s in catalog.yaml", ruleYAML(want), at)
		out = append(out, f)
	}
	return out
}

// gap is a resource the chart renders that the rules do not grant fully
// (or that is of an unknown kind), with the objects of it.
type gap struct {
	at       Finding
	gvk      schema.GroupVersionKind
	resource string
	known    bool
	missing  []string
	objects  []string
}

// groupName names an API group in messages: "core" for "".
func groupName(g string) string {
	if g == "" {
		return "core"
	}
	return g
}

// missingVerbs returns the verbs of want that no rule grants on
// group/resource. A rule restricted to resourceNames grants nothing here:
// create and list cannot be restricted by name.
func missingVerbs(rules []rbacv1.PolicyRule, group, resource string, want []string) []string {
	granted := map[string]bool{}
	for _, r := range rules {
		if len(r.ResourceNames) > 0 || !(slices.Contains(r.APIGroups, group) || slices.Contains(r.APIGroups, "*")) ||
			!(slices.Contains(r.Resources, resource) || slices.Contains(r.Resources, "*")) {
			continue
		}
		for _, v := range r.Verbs {
			granted[v] = true
		}
	}
	var out []string
	for _, v := range want {
		if !granted[v] && !granted["*"] {
			out = append(out, v)
		}
	}
	return out
}

// ruleYAML prints a rule as catalog.yaml holds it, in flow style.
func ruleYAML(r rbacv1.PolicyRule) string {
	groups := make([]string, len(r.APIGroups))
	for i, g := range r.APIGroups {
		groups[i] = g
		if g == "" {
			groups[i] = `""`
		}
	}
	return fmt.Sprintf("{apiGroups: [%s], resources: [%s], verbs: [%s]}", strings.Join(groups, ", "), strings.Join(r.Resources, ", "), strings.Join(r.Verbs, ", "))
}

// kindLine returns the line of the template file that says "kind: <kind>",
// when exactly one does, else 0.
func kindLine(c *loadedChart, file, kind string) int {
	re := regexp.MustCompile(`(?m)^\s*kind:\s*["']?` + regexp.QuoteMeta(kind) + `["']?\s*$`)
	for _, t := range c.templates {
		if t.Name != file {
			continue
		}
		if m := re.FindAllStringIndex(t.Text, 2); len(m) == 1 {
			return strings.Count(t.Text[:m[0][0]], "\n") + 1
		}
	}
	return 0
}
