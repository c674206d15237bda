package packagesourcereconciler

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/registry/remote/auth"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
)

// Origin is where one PackageSource's artifact is read from: a target
// (registry repository or OCI image layout) and the reference it resolves.
type Origin struct {
	Target oras.ReadOnlyTarget
	// Reference is what Target resolves: a tag or a digest.
	Reference string
	// Display is the full reference for status and messages:
	// "<repository>:<tag>", "<repository>@<digest>" or "<path>:<tag>".
	Display string
}

// Opener opens the Origin of a PackageSource's spec: step 2's seam (the
// real one is Open; tests give a fake target).
type Opener func(ctx context.Context, r client.Reader, spec v1alpha1.PackageSourceSpec) (*Origin, error)

// Open returns the origin of spec. For a registry it reads the pull
// Secret, if any, from v1alpha1.SystemNamespace through r (the API, not a
// cache: the operator does not watch Secrets).
func Open(ctx context.Context, r client.Reader, spec v1alpha1.PackageSourceSpec) (*Origin, error) {
	switch {
	case spec.OCI != nil:
		o := spec.OCI
		display := o.Repository + ":" + o.Tag
		if o.Digest != "" {
			display = o.Repository + "@" + o.Digest
		}
		opts := artifact.RemoteOptions{PlainHTTP: o.PlainHTTP}
		if o.PullSecretRef != nil {
			cred, err := credential(ctx, r, o.PullSecretRef.Name, o.Repository)
			if err != nil {
				return nil, err
			}
			opts.Credential = cred
		}
		repo, ref, err := artifact.NewRepository(display, opts)
		if err != nil {
			return nil, fmt.Errorf("spec.oci: %w", err)
		}
		return &Origin{Target: repo, Reference: ref, Display: display}, nil
	case spec.Layout != nil:
		l := spec.Layout
		if _, err := os.Stat(l.Path); err != nil {
			return nil, fmt.Errorf("spec.layout.path %s: %w: the directory must exist on the operator's file system and hold oci-layout and index.json", l.Path, err)
		}
		store, err := oci.NewFromFS(ctx, os.DirFS(l.Path))
		if err != nil {
			return nil, fmt.Errorf("spec.layout.path %s: not an OCI image layout: %w", l.Path, err)
		}
		return &Origin{Target: store, Reference: l.Tag, Display: l.Path + ":" + l.Tag}, nil
	default:
		return nil, fmt.Errorf("spec: set one of spec.oci and spec.layout")
	}
}

// credential reads the kubernetes.io/dockerconfigjson Secret name in the
// system namespace and returns the entry for repository's host.
func credential(ctx context.Context, r client.Reader, name, repository string) (auth.Credential, error) {
	var s corev1.Secret
	key := client.ObjectKey{Namespace: v1alpha1.SystemNamespace, Name: name}
	if err := r.Get(ctx, key, &s); err != nil {
		return auth.EmptyCredential, fmt.Errorf("spec.oci.pullSecretRef: Secret %s: %w", key, err)
	}
	data, ok := s.Data[corev1.DockerConfigJsonKey]
	if !ok {
		return auth.EmptyCredential, fmt.Errorf("spec.oci.pullSecretRef: Secret %s has no %s key: create it with kubectl create secret docker-registry", key, corev1.DockerConfigJsonKey)
	}
	host, _, _ := strings.Cut(repository, "/")
	return dockerCredential(data, host)
}

// dockerCredential finds host in a Docker config.json ({"auths": {host:
// {username, password} or {auth: base64(user:password)}}}).
func dockerCredential(data []byte, host string) (auth.Credential, error) {
	var cfg struct {
		Auths map[string]struct {
			Username string `json:"username"`
			Password string `json:"password"`
			Auth     string `json:"auth"`
		} `json:"auths"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return auth.EmptyCredential, fmt.Errorf("spec.oci.pullSecretRef: %s is not a Docker config.json: %w", corev1.DockerConfigJsonKey, err)
	}
	for _, key := range []string{host, "https://" + host, "http://" + host} {
		e, ok := cfg.Auths[key]
		if !ok {
			continue
		}
		if e.Auth != "" {
			dec, err := base64.StdEncoding.DecodeString(e.Auth)
			if err != nil {
				return auth.EmptyCredential, fmt.Errorf("spec.oci.pullSecretRef: auths[%q].auth is not base64: %w", key, err)
			}
			user, pass, ok := strings.Cut(string(dec), ":")
			if !ok {
				return auth.EmptyCredential, fmt.Errorf("spec.oci.pullSecretRef: auths[%q].auth is not base64(user:password)", key)
			}
			return auth.Credential{Username: user, Password: pass}, nil
		}
		return auth.Credential{Username: e.Username, Password: e.Password}, nil
	}
	return auth.EmptyCredential, fmt.Errorf("spec.oci.pullSecretRef: the Docker config has no entry for %s: add one under auths", host)
}
