package main

import (
	"bytes"
	"context"
	"encoding/json"
	goflag "flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"cozystack.io/platform/internal/apiserver"
	"cozystack.io/platform/internal/apiserver/appkinds"
	"cozystack.io/platform/internal/registry/application"
	"cozystack.io/platform/internal/stackgrow"
)

func main() {
	o := apiserver.NewOptions()
	fs := pflag.NewFlagSet("benchfloor", pflag.ExitOnError)
	o.AddFlags(fs)
	logFlags := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(logFlags)
	fs.AddGoFlagSet(logFlags)
	_ = fs.Parse(os.Args[1:])
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(o *apiserver.Options) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := o.ApplyMemoryLimit(); err != nil { // as cozystack-api
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.BackendKubeconfig())
	if err != nil {
		return err
	}
	hc, err := restclient.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	srv, err := apiserver.New(o, func(k *appkinds.Kind, b application.Backend) rest.Storage {
		return &floorREST{REST: application.NewREST(k, b), kind: k, http: hc, host: cfg.Host}
	})
	if err != nil {
		return err
	}
	return srv.Run(ctx)
}

// floorREST is cozystack-api's storage with the cheapest create.
type floorREST struct {
	*application.REST
	kind *appkinds.Kind
	http *http.Client
	host string

	once     sync.Once
	template string // the HelmRelease's JSON, named namePlaceholder
	err      error
}

const namePlaceholder = "benchfloor-name-placeholder"

// Create forwards the HelmRelease of obj to kube-apiserver and returns obj.
func (f *floorREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	stackgrow.Grow() // as cozystack-api's Create
	app, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("unexpected object %T", obj)
	}
	if createValidation != nil {
		if err := createValidation(ctx, obj); err != nil {
			return nil, err
		}
	}
	f.once.Do(func() {
		hr, err := application.ToHelmRelease(f.kind, app)
		if err != nil {
			f.err = err
			return
		}
		hr.Name = namePlaceholder
		data, err := json.Marshal(hr)
		f.template, f.err = string(data), err
	})
	if f.err != nil {
		return nil, f.err
	}
	body := strings.Replace(f.template, namePlaceholder, f.kind.HelmReleaseName(app.GetName()), 1)
	url := f.host + "/apis/helm.toolkit.fluxcd.io/v2/namespaces/" + app.GetNamespace() + "/helmreleases?fieldManager=" +
		application.FieldManager + "&fieldValidation=" + metav1.FieldValidationIgnore
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader([]byte(body)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		return nil, fmt.Errorf("create HelmRelease: %s: %s", resp.Status, data)
	}
	return app, nil
}
