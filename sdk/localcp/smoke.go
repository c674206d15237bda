package localcp

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SmokeNamespace is where Smoke works; it is deleted at the end.
const SmokeNamespace = "cozystack-smoke"

// Scheme knows the core kinds and the Flux kinds a local control plane has.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, helmv2.AddToScheme, sourcev1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// ChartArchive returns a gzipped tar of a Helm chart whose files are given
// relative to the chart directory (e.g. "Chart.yaml", "templates/cm.yaml"),
// under the top-level directory name as `helm package` lays it out.
func ChartArchive(name string, files map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	// Fixed order and times make the digest reproducible.
	for _, path := range slices.Sorted(maps.Keys(files)) {
		body := files[path]
		hdr := &tar.Header{Name: name + "/" + path, Mode: 0o644, Size: int64(len(body)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := io.WriteString(tw, body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ArtifactServer serves byte blobs over HTTP on loopback for helm-controller
// to download, the way a source controller's artifact server does.
type ArtifactServer struct {
	listener net.Listener
	server   *http.Server
	mux      *http.ServeMux
}

// NewArtifactServer starts a server on a free loopback port.
func NewArtifactServer() (*ArtifactServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &ArtifactServer{listener: l, mux: http.NewServeMux()}
	s.server = &http.Server{Handler: s.mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.server.Serve(l) }()
	return s, nil
}

// Publish serves data at path and returns an Artifact describing it, with
// its sha256 digest, as ExternalArtifact.status.artifact expects.
func (s *ArtifactServer) Publish(path, revision string, data []byte) meta.Artifact {
	s.mux.HandleFunc("/"+path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(data)
	})
	sum := sha256.Sum256(data)
	size := int64(len(data))
	return meta.Artifact{
		Path:           path,
		URL:            fmt.Sprintf("http://%s/%s", s.listener.Addr(), path),
		Revision:       revision,
		Digest:         "sha256:" + hex.EncodeToString(sum[:]),
		LastUpdateTime: metav1.Now(),
		Size:           &size,
	}
}

// Close stops the server.
func (s *ArtifactServer) Close() error { return s.server.Close() }

// CreateInstaller creates, in namespace, the ServiceAccount name and a Role
// and RoleBinding of the same name granting it every verb Helm uses on the
// core resources given and on Secrets (Helm's release storage): the
// identity a HelmRelease names in spec.serviceAccountName to install a
// chart of those resources while helm-controller runs locked down
// (DefaultServiceAccount).
func CreateInstaller(ctx context.Context, c client.Client, namespace, name string, resources ...string) error {
	meta := metav1.ObjectMeta{Name: name, Namespace: namespace}
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: meta},
		&rbacv1.Role{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: append([]string{"secrets"}, resources...),
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"},
		}}},
		&rbacv1.RoleBinding{ObjectMeta: meta,
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: namespace}}},
	}
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create the installer identity %s/%s: %w", namespace, name, err)
		}
	}
	return nil
}

// Smoke proves that the control plane installs a Helm chart end to end: it
// serves a one-ConfigMap chart from a local HTTP server, publishes it as an
// ExternalArtifact (writing the status a source controller would write),
// creates a HelmRelease whose chartRef points at it, and waits until the
// real helm-controller has installed it (the ConfigMap exists and the
// HelmRelease is Ready=True). It then deletes the namespace and waits for
// the namespace controller to finish. Timeout bounds the whole check.
func Smoke(ctx context.Context, cfg *rest.Config, out io.Writer, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return err
	}
	step := func(format string, args ...any) { fmt.Fprintf(out, "  smoke: "+format+"\n", args...) }

	chart, err := ChartArchive("smoke", map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: smoke\nversion: 0.1.0\n",
		"values.yaml": "greeting: hello\n",
		"templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-greeting\n" +
			"data:\n  greeting: {{ .Values.greeting | quote }}\n",
	})
	if err != nil {
		return err
	}
	srv, err := NewArtifactServer()
	if err != nil {
		return err
	}
	defer srv.Close()
	artifact := srv.Publish("smoke/chart.tgz", "0.1.0", chart)
	step("serving chart at %s (%s)", artifact.URL, artifact.Digest)

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: SmokeNamespace}}
	if err := waitNamespaceGone(ctx, c, SmokeNamespace); err != nil {
		return err
	}
	if err := c.Create(ctx, ns); err != nil {
		return fmt.Errorf("create namespace: %w", err)
	}
	ea := &sourcev1.ExternalArtifact{ObjectMeta: metav1.ObjectMeta{Name: "smoke", Namespace: SmokeNamespace}}
	if err := c.Create(ctx, ea); err != nil {
		return fmt.Errorf("create ExternalArtifact: %w", err)
	}
	ea.Status.Artifact = &artifact
	apimeta.SetStatusCondition(&ea.Status.Conditions, metav1.Condition{
		Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: meta.SucceededReason,
		Message: "published by cozystack-local smoke", ObservedGeneration: ea.Generation,
	})
	if err := c.Status().Update(ctx, ea); err != nil {
		return fmt.Errorf("write ExternalArtifact status: %w", err)
	}
	// helm-controller runs locked down (DefaultServiceAccount): a release
	// installs only as a ServiceAccount it names.
	if err := CreateInstaller(ctx, c, SmokeNamespace, "smoke-installer", "configmaps"); err != nil {
		return err
	}
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "smoke", Namespace: SmokeNamespace},
		Spec: helmv2.HelmReleaseSpec{
			ServiceAccountName: "smoke-installer",
			Interval:           metav1.Duration{Duration: time.Minute},
			ChartRef:           &helmv2.CrossNamespaceSourceReference{Kind: sourcev1.ExternalArtifactKind, Name: "smoke"},
		},
	}
	if err := c.Create(ctx, hr); err != nil {
		return fmt.Errorf("create HelmRelease: %w", err)
	}
	step("created HelmRelease %s/%s with chartRef ExternalArtifact/smoke", SmokeNamespace, hr.Name)

	var last string
	err = wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(hr), hr); err != nil {
			return false, nil
		}
		if cond := apimeta.FindStatusCondition(hr.Status.Conditions, meta.ReadyCondition); cond != nil {
			last = fmt.Sprintf("Ready=%s %s: %s", cond.Status, cond.Reason, cond.Message)
			return cond.Status == metav1.ConditionTrue, nil
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("HelmRelease never became Ready (last: %s): %w; see helm-controller's log", last, err)
	}
	step("HelmRelease %s", last)
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: SmokeNamespace, Name: "smoke-greeting"}, &cm); err != nil {
		return fmt.Errorf("the chart's ConfigMap is missing: %w", err)
	}
	if cm.Data["greeting"] != "hello" {
		return fmt.Errorf("ConfigMap smoke-greeting has greeting=%q, want hello", cm.Data["greeting"])
	}
	step("ConfigMap %s/%s installed by helm-controller", SmokeNamespace, cm.Name)

	if err := c.Delete(ctx, hr); err != nil {
		return err
	}
	if err := c.Delete(ctx, ns); err != nil {
		return err
	}
	if err := waitNamespaceGone(ctx, c, SmokeNamespace); err != nil {
		return err
	}
	step("namespace %s deleted", SmokeNamespace)
	return nil
}

// waitNamespaceGone waits until the namespace controller has finished
// deleting the namespace (or it never existed).
func waitNamespaceGone(ctx context.Context, c client.Client, name string) error {
	var ns corev1.Namespace
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Name: name}, &ns)
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		return fmt.Errorf("namespace %s did not finish deleting (phase %s): %w", name, ns.Status.Phase, err)
	}
	return nil
}
