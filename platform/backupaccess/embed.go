package backupaccess

import (
	"context"
	"embed"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/manifests"
)

//go:embed *.yaml
var files embed.FS

// FieldOwner is the server-side apply field manager of Apply.
const FieldOwner = "cozystack-controller"

// PlatformServiceAccount is the user name of the platform's own
// ServiceAccount, which policy.yaml exempts beside system:masters.
const PlatformServiceAccount = "system:serviceaccount:cozy-system:cozystack-controller"

// Objects returns the embedded objects, fresh on each call, in document
// order.
func Objects() ([]*unstructured.Unstructured, error) { return manifests.Decode(files) }

// Apply server-side applies every object of Objects with c, taking
// ownership of conflicting fields. The error names the object that
// failed.
func Apply(ctx context.Context, c client.Client) error {
	objs, err := Objects()
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := c.Patch(ctx, o, client.Apply, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("apply %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}
