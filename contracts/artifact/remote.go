package artifact

import (
	"fmt"
	"net/http"

	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/retry"
)

// RemoteOptions say how to talk to a registry.
type RemoteOptions struct {
	// PlainHTTP uses HTTP instead of HTTPS (loopback and test registries).
	PlainHTTP bool
	// Credential for the registry's host; the zero value is anonymous.
	Credential auth.Credential
	// HTTPClient carries the requests; nil uses oras-go's retrying client.
	HTTPClient *http.Client
}

// NewRepository returns the registry repository of reference, which has
// the form host[:port]/repository[:tag][@digest] (e.g.
// "127.0.0.1:5000/catalogs/demo:0.1.0"), and the tag or digest it names
// ("" when it names neither). The repository is an oras.Target usable with
// Pull and oras.Copy.
func NewRepository(reference string, opts RemoteOptions) (*remote.Repository, string, error) {
	ref, err := registry.ParseReference(reference)
	if err != nil {
		return nil, "", fmt.Errorf("reference %q: want host[:port]/repository[:tag|@digest]: %w", reference, err)
	}
	httpClient := opts.HTTPClient
	if httpClient == nil {
		httpClient = retry.DefaultClient
	}
	client := &auth.Client{Client: httpClient, Cache: auth.NewCache()}
	if opts.Credential != auth.EmptyCredential {
		client.Credential = auth.StaticCredential(ref.Host(), opts.Credential)
	}
	repo := &remote.Repository{Reference: ref, Client: client, PlainHTTP: opts.PlainHTTP}
	return repo, ref.Reference, nil
}
