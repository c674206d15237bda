package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/valuesschema"
)

// The naming and labelling of an application's HelmRelease (K1).
const (
	LabelApplicationKind  = "apps.cozystack.io/application.kind"
	LabelApplicationGroup = "apps.cozystack.io/application.group"
	LabelApplicationName  = "apps.cozystack.io/application.name"
	ApplicationGroup      = "apps.cozystack.io"
	ApplicationVersion    = "v1alpha1"
)

var (
	adGVR        = schema.GroupVersionResource{Group: "cozystack.io", Version: "v1alpha1", Resource: "applicationdefinitions"}
	helmReleases = schema.GroupVersionResource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"}
	namespaces   = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// LiveOptions tune Live.
type LiveOptions struct {
	// Timeout bounds each wait (an AD served, an object gone); default 60s.
	Timeout time.Duration
	// ObjectName is the name of the object created of each kind; default
	// "conformance".
	ObjectName string
	// Keep leaves the ADs and the test namespace in place.
	Keep bool
}

// FieldManager is the field manager of what Live applies.
const FieldManager = "cozystack-conformance"

// Live installs the ApplicationDefinitions of src on the cluster of cfg,
// where cozystack-api must already serve apps.cozystack.io, and for each
// kind creates one object (its spec built from the schema's defaults and
// the required fields' minimal values), reads it back, checks its
// HelmRelease (name <prefix><name>, the AD's chartRef, the application
// labels), deletes it and waits for the HelmRelease to go. Nothing needs
// to reconcile the HelmRelease: there is no check of readiness. The
// objects live in a new namespace, deleted at the end with the ADs unless
// opts.Keep. Findings have the rules LIVE-*; the error is for a cluster
// that cannot be used at all.
func Live(ctx context.Context, cfg *rest.Config, src *Source, opts LiveOptions) ([]Finding, error) {
	if !src.HasADs {
		return nil, errors.New("the live checks need the catalog's ApplicationDefinitions: run them on a catalog directory, or an artifact that carries its definitions")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 60 * time.Second
	}
	if opts.ObjectName == "" {
		opts.ObjectName = "conformance"
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ns, err := dyn.Resource(namespaces).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"generateName": "conformance-", "labels": map[string]any{"app.kubernetes.io/managed-by": FieldManager}},
	}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create the test namespace: %w", err)
	}
	l := &live{dyn: dyn, ns: ns.GetName(), opts: opts}
	defer func() {
		if opts.Keep {
			return
		}
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		for _, name := range l.applied {
			_ = dyn.Resource(adGVR).Delete(cleanup, name, metav1.DeleteOptions{})
		}
		_ = dyn.Resource(namespaces).Delete(cleanup, l.ns, metav1.DeleteOptions{})
	}()
	var out []Finding
	for _, doc := range src.ADs {
		fs, err := l.kind(ctx, doc)
		out = append(out, fs...)
		if err != nil {
			return out, err
		}
	}
	sortFindings(out)
	return out, nil
}

type live struct {
	dyn     dynamic.Interface
	ns      string
	opts    LiveOptions
	applied []string
}

func liveFinding(doc ADDocument, rule, path, msg, fix string) Finding {
	return Finding{RuleID: rule, Severity: Error, File: doc.File, Line: doc.Line, Path: path, Message: msg, Fix: fix}
}

// kind runs the live checks of one AD document.
func (l *live) kind(ctx context.Context, doc ADDocument) ([]Finding, error) {
	js, err := yaml.YAMLToJSON(doc.Data)
	if err != nil {
		return []Finding{liveFinding(doc, "LIVE-install", "", "not YAML: "+err.Error(), "fix the file (K1-decode)")}, nil
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(js); err != nil {
		return []Finding{liveFinding(doc, "LIVE-install", "", "not an object: "+err.Error(), "fix the file (K1-decode)")}, nil
	}
	def := &v1alpha1.ApplicationDefinition{}
	if err := yaml.Unmarshal(doc.Data, def); err != nil {
		return []Finding{liveFinding(doc, "LIVE-install", "", "not an ApplicationDefinition: "+err.Error(), "fix the file (K1-decode)")}, nil
	}
	unstructured.RemoveNestedField(obj.Object, "status")
	name := obj.GetName()
	applied, err := l.dyn.Resource(adGVR).Apply(ctx, name, obj, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		if apierrors.IsNotFound(err) && strings.Contains(err.Error(), "the server could not find the requested resource") {
			return nil, fmt.Errorf("the cluster serves no ApplicationDefinitions (cozystack.io/v1alpha1): install the platform first: %w", err)
		}
		return []Finding{liveFinding(doc, "LIVE-install", "metadata.name", fmt.Sprintf("ApplicationDefinition %s is refused: %v", name, err),
			"make the AD valid for the platform's CRD (k1-application.schema.json)")}, nil
	}
	l.applied = append(l.applied, name)
	app := def.Spec.Application
	label := fmt.Sprintf("%s %s/%s", app.Kind, l.ns, l.opts.ObjectName)

	// Served.
	var served *metav1.Condition
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, l.opts.Timeout, true, func(ctx context.Context) (bool, error) {
		cur, err := l.dyn.Resource(adGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		served = servedCondition(cur, applied.GetGeneration())
		return served != nil, nil
	})
	if err != nil || served.Status != metav1.ConditionTrue {
		msg := fmt.Sprintf("ApplicationDefinition %s is not served within %s", name, l.opts.Timeout)
		if served != nil {
			msg = fmt.Sprintf("ApplicationDefinition %s has Served=%s, reason %s: %s", name, served.Status, served.Reason, served.Message)
		}
		return []Finding{liveFinding(doc, "LIVE-served", "status.conditions[Served]", msg, "fix what the condition names; the static rules K1-* show the same problems earlier")}, nil
	}
	gvr := schema.GroupVersionResource{Group: ApplicationGroup, Version: ApplicationVersion, Resource: app.Plural}
	apps := l.dyn.Resource(gvr).Namespace(l.ns)
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, l.opts.Timeout, true, func(ctx context.Context) (bool, error) {
		_, err := apps.List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil, nil
	})
	if err != nil {
		return []Finding{liveFinding(doc, "LIVE-served", "spec.application.plural", fmt.Sprintf("%s reports Served=True but %s does not answer within %s", name, gvr, l.opts.Timeout),
			"check cozystack-api's APIService and logs")}, nil
	}

	// Create.
	schemaDoc, _ := decodeJSON([]byte(def.Spec.Application.OpenAPISchema))
	sm, _ := normalizeForAPI(schemaDoc).(map[string]any)
	spec, _ := exampleValue(sm).(map[string]any)
	if spec == nil {
		spec = map[string]any{}
	}
	create := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": ApplicationGroup + "/" + ApplicationVersion, "kind": app.Kind,
		"metadata": map[string]any{"name": l.opts.ObjectName}, "spec": spec,
	}}
	if _, err := apps.Create(ctx, create, metav1.CreateOptions{FieldManager: FieldManager}); err != nil {
		return []Finding{liveFinding(doc, "LIVE-create", "spec.application.openAPISchema", fmt.Sprintf("creating %s with spec %s is refused: %v", label, compactJSON(spec), err),
			"give every required field a default (or make it optional), so that an object built from the defaults is valid")}, nil
	}
	var out []Finding

	// Read.
	got, err := apps.Get(ctx, l.opts.ObjectName, metav1.GetOptions{})
	if err != nil {
		out = append(out, liveFinding(doc, "LIVE-read", "", fmt.Sprintf("reading %s back: %v", label, err), "check cozystack-api's logs"))
	} else {
		gotSpec, _, _ := unstructured.NestedMap(got.Object, "spec")
		var missing []string
		props, _ := sm["properties"].(map[string]any)
		for _, k := range sortedKeys(props) {
			p, _ := props[k].(map[string]any)
			if _, hasDefault := p["default"]; hasDefault {
				if _, ok := gotSpec[k]; !ok {
					missing = append(missing, k)
				}
			}
		}
		if got.GetKind() != app.Kind || got.GetName() != l.opts.ObjectName || len(missing) > 0 {
			out = append(out, liveFinding(doc, "LIVE-read", "", fmt.Sprintf("%s reads back as kind %q name %q, spec without the defaults of %s", label, got.GetKind(), got.GetName(), strings.Join(missing, ", ")),
				"the platform must default on read (K1); report it against cozystack-api"))
		}
	}

	// The HelmRelease.
	hrName := def.Spec.Release.Prefix + l.opts.ObjectName
	hr, err := l.dyn.Resource(helmReleases).Namespace(l.ns).Get(ctx, hrName, metav1.GetOptions{})
	if err != nil {
		out = append(out, liveFinding(doc, "LIVE-helmrelease", "spec.release.prefix", fmt.Sprintf("no HelmRelease %s/%s for %s: %v", l.ns, hrName, label, err),
			"the platform stores each object as HelmRelease <prefix><name> (K1); report it against cozystack-api"))
	} else if msg := checkHelmRelease(hr, def, l.opts.ObjectName); msg != "" {
		out = append(out, liveFinding(doc, "LIVE-helmrelease", "spec.release", fmt.Sprintf("HelmRelease %s/%s of %s: %s", l.ns, hrName, label, msg),
			"the HelmRelease must carry the AD's chartRef and the application labels (K1)"))
	}

	// Delete.
	if err := apps.Delete(ctx, l.opts.ObjectName, metav1.DeleteOptions{}); err != nil {
		out = append(out, liveFinding(doc, "LIVE-delete", "", fmt.Sprintf("deleting %s: %v", label, err), "check cozystack-api's logs"))
		return out, nil
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, l.opts.Timeout, true, func(ctx context.Context) (bool, error) {
		_, aerr := apps.Get(ctx, l.opts.ObjectName, metav1.GetOptions{})
		_, herr := l.dyn.Resource(helmReleases).Namespace(l.ns).Get(ctx, hrName, metav1.GetOptions{})
		return apierrors.IsNotFound(aerr) && apierrors.IsNotFound(herr), nil
	})
	if err != nil {
		out = append(out, liveFinding(doc, "LIVE-delete", "", fmt.Sprintf("%s or its HelmRelease %s still exists %s after the delete", label, hrName, l.opts.Timeout),
			"check the HelmRelease's finalizers and cozystack-api's logs"))
	}
	return out, nil
}

// servedCondition returns the Served condition of an AD once it describes
// generation, or nil.
func servedCondition(ad *unstructured.Unstructured, generation int64) *metav1.Condition {
	conds, _, _ := unstructured.NestedSlice(ad.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] != v1alpha1.ConditionServed {
			continue
		}
		if og, ok := m["observedGeneration"].(int64); ok && og < generation {
			return nil
		}
		status, _ := m["status"].(string)
		reason, _ := m["reason"].(string)
		message, _ := m["message"].(string)
		return &metav1.Condition{Type: v1alpha1.ConditionServed, Status: metav1.ConditionStatus(status), Reason: reason, Message: message}
	}
	return nil
}

// checkHelmRelease returns what is wrong with an application's
// HelmRelease, or "".
func checkHelmRelease(hr *unstructured.Unstructured, def *v1alpha1.ApplicationDefinition, name string) string {
	var problems []string
	want := def.Spec.Release.ChartRef
	if want == nil {
		want = &v1alpha1.ChartRef{Kind: "ExternalArtifact", Name: v1alpha1.ComponentArtifactName(def.Spec.Release.Source, def.Spec.Release.Component), Namespace: v1alpha1.SystemNamespace}
	}
	ref, _, _ := unstructured.NestedStringMap(hr.Object, "spec", "chartRef")
	if ref["kind"] != want.Kind || ref["name"] != want.Name || ref["namespace"] != want.Namespace {
		problems = append(problems, fmt.Sprintf("chartRef is %s %s/%s, want %s %s/%s", ref["kind"], ref["namespace"], ref["name"], want.Kind, want.Namespace, want.Name))
	}
	labels := hr.GetLabels()
	for k, v := range map[string]string{LabelApplicationKind: def.Spec.Application.Kind, LabelApplicationGroup: ApplicationGroup, LabelApplicationName: name} {
		if labels[k] != v {
			problems = append(problems, fmt.Sprintf("label %s is %q, want %q", k, labels[k], v))
		}
	}
	for k, v := range def.Spec.Release.Labels {
		if labels[k] != v {
			problems = append(problems, fmt.Sprintf("label %s is %q, want %q (release.labels)", k, labels[k], v))
		}
	}
	return strings.Join(problems, "; ")
}

// normalizeForAPI turns json.Number into int64 or float64, as the API
// machinery's unstructured values want them.
func normalizeForAPI(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = normalizeForAPI(e)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			l[i] = normalizeForAPI(e)
		}
		return l
	case interface {
		Int64() (int64, error)
		Float64() (float64, error)
	}:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	}
	return v
}

// exampleValue returns the smallest value of a schema the suite can build
// without guessing: its default, const or first enum value; for an object
// its required properties; for an array minItems items; else a zero value
// of its type at its minimum or minimum length.
func exampleValue(s map[string]any) any {
	if s == nil {
		return nil
	}
	if d, ok := s["default"]; ok {
		return valuesschema.DeepCopy(d)
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		if l, ok := s[kw].([]any); ok && len(l) > 0 && s["type"] == nil {
			b, _ := l[0].(map[string]any)
			return exampleValue(b)
		}
	}
	typ, _ := s["type"].(string)
	if l, ok := s["type"].([]any); ok && len(l) > 0 {
		typ, _ = l[0].(string)
	}
	switch typ {
	case "object", "":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			k, _ := r.(string)
			p, _ := props[k].(map[string]any)
			out[k] = exampleValue(p)
		}
		if typ == "" && len(out) == 0 && props == nil {
			return nil
		}
		return out
	case "array":
		var out []any
		n, _ := s["minItems"].(int64)
		items, _ := s["items"].(map[string]any)
		for range n {
			out = append(out, exampleValue(items))
		}
		if out == nil {
			out = []any{}
		}
		return out
	case "string":
		n, _ := s["minLength"].(int64)
		return strings.Repeat("a", int(n))
	case "integer":
		if m, ok := s["minimum"].(int64); ok {
			return m
		}
		return int64(0)
	case "number":
		if m, ok := s["minimum"].(float64); ok {
			return m
		}
		if m, ok := s["minimum"].(int64); ok {
			return m
		}
		return int64(0)
	case "boolean":
		return false
	}
	return nil
}
