package localcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// installCRDs applies the pinned CRDs (copied into Layout.CRDDir by Build)
// and creates the Flux runtime namespace, before helm-controller starts:
// its informers fail without the kinds they watch.
func (cp *ControlPlane) installCRDs(ctx context.Context) error {
	cfg, err := cp.RESTConfig()
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(cp.opts.Layout.CRDDir(), "*.yaml"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no CRDs in %s: run `make build` (cozystack-local build), which copies them from the Go module cache", cp.opts.Layout.CRDDir())
	}
	sort.Strings(files)
	start := time.Now()
	if err := ApplyCRDFiles(ctx, cfg, files...); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: FluxNamespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", FluxNamespace, err)
	}
	fmt.Fprintf(cp.opts.Out, "  %-24s %d installed in %s\n", "flux CRDs", len(files), time.Since(start).Round(10*time.Millisecond))
	return nil
}

// ApplyCRDFiles creates or updates the CRDs in files (one or more YAML
// documents each) and waits until every one is Established.
func ApplyCRDFiles(ctx context.Context, cfg *rest.Config, files ...string) error {
	crds, err := ReadCRDFiles(files...)
	if err != nil {
		return err
	}
	return ApplyCRDs(ctx, cfg, crds...)
}

// ReadCRDFiles decodes the CustomResourceDefinitions of files (one or more
// YAML documents each; documents of other kinds are skipped), in the order
// given. An error names the file, and the document (counted from 0) when
// one does not decode.
func ReadCRDFiles(files ...string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		got, err := DecodeCRDs(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		crds = append(crds, got...)
	}
	return crds, nil
}

// DecodeCRDs returns the CustomResourceDefinitions among the YAML documents
// of data; documents of other kinds are skipped.
func DecodeCRDs(data []byte) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	docs, err := SplitYAML(data)
	if err != nil {
		return nil, err
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for i, doc := range docs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(doc, crd); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if crd.Kind == "CustomResourceDefinition" {
			crds = append(crds, crd)
		}
	}
	return crds, nil
}

// ApplyCRDs creates or updates crds and waits (up to 30s) until every one
// is Established.
func ApplyCRDs(ctx context.Context, cfg *rest.Config, crds ...*apiextensionsv1.CustomResourceDefinition) error {
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var names []string
	for _, crd := range crds {
		if err := applyCRD(ctx, client, crd.DeepCopy()); err != nil {
			return fmt.Errorf("apply CRD %s: %w", crd.Name, err)
		}
		names = append(names, crd.Name)
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, n := range names {
			crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, n, metav1.GetOptions{})
			if err != nil || !crdEstablished(crd) {
				return false, nil
			}
		}
		return true, nil
	})
}

func applyCRD(ctx context.Context, client apiextensionsclient.Interface, crd *apiextensionsv1.CustomResourceDefinition) error {
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	existing, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = crds.Create(ctx, crd, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	crd.ResourceVersion = existing.ResourceVersion
	_, err = crds.Update(ctx, crd, metav1.UpdateOptions{})
	return err
}

func crdEstablished(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// SplitYAML splits a multi-document YAML stream, dropping empty documents.
func SplitYAML(data []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		docs = append(docs, doc)
	}
}
