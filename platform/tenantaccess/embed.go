package tenantaccess

import (
	"context"
	"embed"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/manifests"
)

//go:embed *.yaml
var files embed.FS

// Objects returns the embedded objects, fresh on each call, in file-name
// and document order.
func Objects() ([]*unstructured.Unstructured, error) {
	return manifests.Decode(files)
}

// Apply server-side applies every object of Objects with c as
// cozystack-controller (v1alpha1.FieldManagerController), taking
// ownership of conflicting fields (these objects are the platform's). The
// error names the object that failed.
func Apply(ctx context.Context, c client.Client) error {
	objs, err := Objects()
	if err != nil {
		return err
	}
	return manifests.Apply(ctx, c, v1alpha1.FieldManagerController, objs)
}
