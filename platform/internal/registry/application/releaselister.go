package application

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	kjson "sigs.k8s.io/json"
)

// ReleaseLister lists HelmReleases from kube-apiserver as a stream: the
// response is decoded one item at a time, so a list of thousands of
// HelmReleases is never held whole in memory, and an item whose UID and
// resourceVersion the caller already converted is not decoded at all.
type ReleaseLister struct {
	client rest.Interface
}

// NewReleaseLister returns a lister of helm.toolkit.fluxcd.io/v2
// HelmReleases through cfg (copied; JSON, no compression needed on it).
func NewReleaseLister(cfg *rest.Config) (*ReleaseLister, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &helmv2.GroupVersion
	c.APIPath = "/apis"
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	c.AcceptContentTypes, c.ContentType = "application/json", "application/json"
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, err
	}
	return &ReleaseLister{client: rc}, nil
}

// optionsVersion is the version list options are encoded in: meta/v1,
// registered as "v1" in client-go's scheme (HelmRelease's own group has no
// option types).
var optionsVersion = schema.GroupVersion{Version: "v1"}

// ListItem is one listed HelmRelease: its UID and resourceVersion, and
// Decode, which decodes the whole object (only valid during the callback:
// the decoder reuses the item's bytes afterwards).
type ListItem struct {
	UID             types.UID
	ResourceVersion string
	raw             []byte
}

// Decode decodes the item as kube-apiserver's JSON decoding does (case
// sensitive, integers kept as int64).
func (i *ListItem) Decode() (*helmv2.HelmRelease, error) {
	hr := &helmv2.HelmRelease{}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(i.raw, hr); err != nil {
		return nil, fmt.Errorf("HelmRelease %s: %w", i.UID, err)
	}
	return hr, nil
}

// List lists the HelmReleases of namespace ns ("" for all) that opts
// select (passed to kube-apiserver unchanged), calling each for every item
// in order, and returns the list's metadata (resourceVersion, continue,
// remainingItemCount). Errors from kube-apiserver are *StatusError as from
// any client-go request; an error from each stops the list.
func (l *ReleaseLister) List(ctx context.Context, ns string, opts *metav1.ListOptions, each func(*ListItem) error) (metav1.ListMeta, error) {
	body, err := l.client.Get().Namespace(ns).Resource("helmreleases").
		SpecificallyVersionedParams(opts, scheme.ParameterCodec, optionsVersion).Stream(ctx)
	if err != nil {
		return metav1.ListMeta{}, err
	}
	defer body.Close()
	meta, err := decodeList(body, each)
	if err != nil {
		return meta, err
	}
	// Drain what is left (a trailing newline) so the connection is reused.
	_, _ = io.Copy(io.Discard, body)
	return meta, nil
}

// decodeList reads a HelmReleaseList from r in a single pass, calling
// each for every item, and returns the list's metadata. jsontext reads each
// item's bytes once, validating them; encoding/json's Decoder scanned them
// twice, about half of cozystack-api's CPU in a consistent list of
// thousands of memoized items (BenchmarkDecodeList).
func decodeList(r io.Reader, each func(*ListItem) error) (metav1.ListMeta, error) {
	var meta metav1.ListMeta
	// kube-apiserver never writes an object with a name twice; checking
	// for it would keep a set of names per object.
	dec := jsontext.NewDecoder(r, jsontext.AllowDuplicateNames(true))
	if err := expectKind(dec, '{'); err != nil {
		return meta, err
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return meta, fmt.Errorf("HelmRelease list: %w", err)
		}
		switch name.String() {
		case "metadata":
			v, err := dec.ReadValue()
			if err == nil {
				err = json.Unmarshal(v, &meta)
			}
			if err != nil {
				return meta, fmt.Errorf("HelmRelease list metadata: %w", err)
			}
		case "items":
			if err := listItems(dec, each); err != nil {
				return meta, err
			}
		default:
			if err := dec.SkipValue(); err != nil {
				return meta, fmt.Errorf("HelmRelease list: %w", err)
			}
		}
	}
	return meta, expectKind(dec, '}')
}

func listItems(dec *jsontext.Decoder, each func(*ListItem) error) error {
	if dec.PeekKind() == 'n' { // "items": null
		_, err := dec.ReadToken()
		return err
	}
	if err := expectKind(dec, '['); err != nil {
		return fmt.Errorf("HelmRelease list items: %w", err)
	}
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue()
		if err != nil {
			return fmt.Errorf("HelmRelease list item: %w", err)
		}
		item := &ListItem{raw: v}
		item.UID, item.ResourceVersion = uidAndResourceVersion(v)
		if err := each(item); err != nil {
			return err
		}
	}
	return expectKind(dec, ']')
}

// uidAndResourceVersion reads metadata.uid and metadata.resourceVersion
// of a listed HelmRelease, whose JSON the decoder has validated, with
// gjson, which only skips over the values in between, where json.Unmarshal
// would validate and walk the whole item twice more: for a list of
// thousands whose conversions are memoized, that was most of the work
// (BenchmarkApplicationAPI, rv=""). An item without them (never seen from
// kube-apiserver) is only never found in the memo.
func uidAndResourceVersion(item []byte) (types.UID, string) {
	head := gjson.GetManyBytes(item, "metadata.uid", "metadata.resourceVersion")
	return types.UID(head[0].String()), head[1].String()
}

// expectKind reads the next token, which must be the delimiter want.
func expectKind(dec *jsontext.Decoder, want jsontext.Kind) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return fmt.Errorf("HelmRelease list: %w", err)
	}
	if tok.Kind() != want {
		return fmt.Errorf("HelmRelease list: got %v, want %v", tok, want)
	}
	return nil
}
