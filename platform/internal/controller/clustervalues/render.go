package clustervalues

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/schemas"
	"cozystack.io/platform/internal/appschema"
)

var printer = message.NewPrinter(language.English)

// k2 holds the two halves of the K2 schema, compiled once.
var k2 = sync.OnceValues(func() (*k2Schemas, error) {
	cluster, err := schemas.Compile(schemas.K2ClusterValues + "#/properties/_cluster")
	if err != nil {
		return nil, err
	}
	namespace, err := schemas.Compile(schemas.K2ClusterValues + "#/properties/_namespace")
	if err != nil {
		return nil, err
	}
	return &k2Schemas{cluster: cluster, namespace: namespace}, nil
})

type k2Schemas struct{ cluster, namespace *jsonschema.Schema }

// clusterValues is the validated `_cluster` object of one generation of
// the source.
type clusterValues struct {
	generation int64
	keys       map[string]any
}

// renderCluster renders and validates the `_cluster` object of cv. The
// error says why the spec cannot be projected (a schema violation, with
// the offending key); it is the source's fault, not a transient one.
func renderCluster(cv *v1alpha1.ClusterValues) (*clusterValues, error) {
	s, err := k2()
	if err != nil {
		return nil, err
	}
	keys := v1alpha1.ClusterKeys(&cv.Spec)
	if err := validate(s.cluster, keys); err != nil {
		return nil, fmt.Errorf("_cluster does not satisfy the K2 schema: %w", err)
	}
	return &clusterValues{generation: cv.Generation, keys: keys}, nil
}

// document is the rendered content of one tenant namespace's values
// objects.
type document struct {
	// values is the K2 document, YAML with _cluster and _namespace (the
	// ConfigMap's and the Secret's key values.yaml).
	values []byte
}

// renderNamespace renders the document of namespace ns from cluster,
// validating ns's `_namespace` object. The error names what is wrong with
// the namespace (e.g. its missing host label).
func renderNamespace(cluster *clusterValues, ns *corev1.Namespace) (*document, error) {
	s, err := k2()
	if err != nil {
		return nil, err
	}
	nsKeys, err := v1alpha1.NamespaceKeys(ns.Labels, ns.Annotations)
	if err != nil {
		return nil, err
	}
	if err := validate(s.namespace, nsKeys); err != nil {
		return nil, fmt.Errorf("_namespace does not satisfy the K2 schema: %w", err)
	}
	// sigs.k8s.io/yaml sorts map keys: equal values give equal bytes, which
	// is what makes "nothing changed" a byte comparison.
	values, err := yaml.Marshal(map[string]any{v1alpha1.ClusterObject: cluster.keys, v1alpha1.NamespaceObject: nsKeys})
	if err != nil {
		return nil, err
	}
	return &document{values: values}, nil
}

// validate checks v, a map of strings and maps, against s, after a JSON
// round trip into the types the validator expects.
func validate(s *jsonschema.Schema, v map[string]any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	err = s.Validate(doc)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	// One line per failing key, for a condition message.
	var msgs []string
	for _, leaf := range appschema.Leaves(ve) {
		msgs = append(msgs, fmt.Sprintf("at /%s: %s", strings.Join(leaf.InstanceLocation, "/"), leaf.ErrorKind.LocalizedString(printer)))
	}
	return errors.New(strings.Join(msgs, "; "))
}

// renderer memoizes renderCluster per (UID, generation) of the source and
// renderNamespace per (source render, namespace UID and resourceVersion):
// the status reconciler recomputes every namespace's document on each
// pass, and at 1,000 namespaces rendering (two schema validations and a
// YAML encoding each) would otherwise cost more CPU than the writes. Safe
// for concurrent use.
type renderer struct {
	mu         sync.Mutex
	clusterKey string
	cluster    *clusterValues
	clusterErr error
	docs       map[string]docEntry
}

type docEntry struct {
	cluster *clusterValues
	key     string
	doc     *document
	err     error
}

func newRenderer() *renderer { return &renderer{docs: map[string]docEntry{}} }

// renderCluster is the memoized renderCluster.
func (r *renderer) renderCluster(cv *v1alpha1.ClusterValues) (*clusterValues, error) {
	key := fmt.Sprintf("%s/%d", cv.UID, cv.Generation)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.clusterKey != key || cv.UID == "" {
		r.clusterKey = key
		r.cluster, r.clusterErr = renderCluster(cv)
	}
	return r.cluster, r.clusterErr
}

// renderNamespace is the memoized renderNamespace.
func (r *renderer) renderNamespace(cluster *clusterValues, ns *corev1.Namespace) (*document, error) {
	key := string(ns.UID) + "/" + ns.ResourceVersion
	r.mu.Lock()
	e, ok := r.docs[ns.Name]
	r.mu.Unlock()
	if ok && e.cluster == cluster && e.key == key && ns.ResourceVersion != "" {
		return e.doc, e.err
	}
	doc, err := renderNamespace(cluster, ns)
	r.mu.Lock()
	r.docs[ns.Name] = docEntry{cluster: cluster, key: key, doc: doc, err: err}
	r.mu.Unlock()
	return doc, err
}

// keep forgets the documents of namespaces not in names.
func (r *renderer) keep(names map[string]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name := range r.docs {
		if !names[name] {
			delete(r.docs, name)
		}
	}
}
