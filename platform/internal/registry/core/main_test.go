package core_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/apiserver/apiservertest"
	"cozystack.io/platform/internal/controller/tenantrbac"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/platform/internal/registry/core"
	"cozystack.io/platform/tenantaccess"
	"cozystack.io/sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{}, &env)) }

const (
	alice = "tenant-alice"
	bob   = "tenant-bob"
	// The application kind of these tests: its AD selects, of a
	// release's Secrets, "secretdemo-<name>-credentials" and those
	// labelled published=true, except "secretdemo-<name>-internal".
	kind      = "SecretDemo"
	plural    = "secretdemos"
	prefix    = "secretdemo-"
	published = "demo.cozystack.io/published"
)

var (
	appsGVR   = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: plural}
	tsGVR     = core.GroupVersion.WithResource(core.TenantSecretsResource)
	c         client.Client
	apps      dynamic.Interface
	once      sync.Once
	errOfOnce error
)

func demoAD() *v1alpha1.ApplicationDefinition {
	return &v1alpha1.ApplicationDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "secretdemo"},
		Spec: v1alpha1.ApplicationDefinitionSpec{
			Application: v1alpha1.ApplicationDefinitionApplication{
				Kind: kind, Singular: "secretdemo", Plural: plural,
				OpenAPISchema: `{"type":"object","properties":{"size":{"type":"string","default":"1Gi"}}}`,
			},
			Release: v1alpha1.ApplicationDefinitionRelease{
				Prefix:   prefix,
				ChartRef: &v1alpha1.ChartRef{Kind: "ExternalArtifact", Name: "secretdemo", Namespace: "cozy-system"},
			},
			Secrets: v1alpha1.ApplicationDefinitionResources{
				Include: []*v1alpha1.ApplicationDefinitionResourceSelector{
					{ResourceNames: []string{prefix + "{{ .name }}-credentials"}},
					{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{published: "true"}}},
				},
				Exclude: []*v1alpha1.ApplicationDefinitionResourceSelector{{ResourceNames: []string{prefix + "{{ .name }}-internal"}}},
			},
		},
	}
}

// start readies the cluster once per test binary: cozystack-api (both
// groups registered) serving demoAD, the platform's tenant roles, and the
// namespaces tenant-alice and tenant-bob bound to them by the tenantrbac
// reconciler. It returns once alice's use group may list TenantSecrets.
func start(t *testing.T) {
	t.Helper()
	testenv.Need(t, env)
	once.Do(func() { errOfOnce = setup(t) })
	if errOfOnce != nil {
		t.Fatalf("setup: %v", errOfOnce)
	}
}

func setup(t *testing.T) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	apiservertest.Start(t, env)
	var err error
	if c, err = client.New(env.Config, client.Options{Scheme: controllermanager.Scheme()}); err != nil {
		return err
	}
	if apps, err = dynamic.NewForConfig(env.Config); err != nil {
		return err
	}
	if err := c.Create(ctx, demoAD()); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if err := tenantaccess.Apply(ctx, c); err != nil {
		return err
	}
	for _, ns := range []string{alice, bob} {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{v1alpha1.LabelTenant: ns[len("tenant-"):]}}}
		if err := c.Create(ctx, n); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: controllermanager.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Cache: cache.Options{ByObject: tenantrbac.CacheByObject()},
	})
	if err != nil {
		return err
	}
	if err := tenantrbac.Setup(mgr); err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(context.Background()); err != nil {
			fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		}
	}()
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if _, err := apps.Resource(appsGVR).Namespace(alice).List(ctx, metav1.ListOptions{}); err != nil {
			return false, nil
		}
		for _, ns := range []string{alice, bob} {
			ok, err := review(ctx, v1alpha1.TenantGroup(ns, v1alpha1.TenantLevelUse), ns, tsGVR.Group, tsGVR.Resource, "list", "")
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	})
}

// review asks kube-apiserver whether a member of group may verb the
// resource (name, when given) in ns.
func review(ctx context.Context, group, ns, apiGroup, resource, verb, name string) (bool, error) {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: "member-of-" + group, Groups: []string{group, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: apiGroup, Resource: resource, Name: name},
	}}
	if err := c.Create(ctx, sar); err != nil {
		return false, err
	}
	return sar.Status.Allowed, nil
}

// as is a dynamic client acting as a member of group (impersonated).
func as(t *testing.T, group string) dynamic.Interface {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "member-of-" + group, Groups: []string{group, "system:authenticated"}}
	return dynamic.NewForConfigOrDie(cfg)
}

// createApp creates the SecretDemo ns/name as an admin.
func createApp(t *testing.T, ctx context.Context, ns, name string) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": appsGVR.GroupVersion().String(), "kind": kind,
		"metadata": map[string]any{"name": name}, "spec": map[string]any{},
	}}
	if _, err := apps.Resource(appsGVR).Namespace(ns).Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// secret is a Secret ns/name; release, when set, is the Helm release
// whose ownership marks it carries (as Helm writes them on every object it
// installs).
func secret(ns, name, release string, labels map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"password": []byte("pw-of-" + name)}}
	if release != "" {
		s.Labels = map[string]string{"app.kubernetes.io/managed-by": "Helm"}
		for k, v := range labels {
			s.Labels[k] = v
		}
		s.Annotations = map[string]string{core.AnnotationReleaseName: release, core.AnnotationReleaseNamespace: ns}
	}
	return s
}

func mustCreate(t *testing.T, ctx context.Context, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}
