package backupaccess

import (
	"context"
	"embed"
	"fmt"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/manifests"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

//go:embed *.yaml
var files embed.FS

// PlatformServiceAccount is the user name of the platform's own
// ServiceAccount, which policy.yaml exempts beside system:masters.
const PlatformServiceAccount = "system:serviceaccount:cozy-system:cozystack-controller"

// Objects returns the embedded objects, fresh on each call, in document
// order.
func Objects() ([]*unstructured.Unstructured, error) { return manifests.Decode(files) }

// Apply server-side applies every object of Objects with c as
// cozystack-controller (v1alpha1.FieldManagerController, whichever binary
// calls it: --install-crds applies them too), taking ownership of
// conflicting fields, then waits until the API server
// records a registration's writer (a dry-run create of a BackupDriver
// comes back with the annotation): policies and a new CRD's schema take
// effect a moment after they are written, and a registration created
// before would carry no writer (WriterUnknown until its next update). The
// error names the object that failed, or says what the last dry run gave
// when ctx ends first. Without the backups.cozystack.io CRDs it does not
// wait.
func Apply(ctx context.Context, c client.Client) error {
	objs, err := Objects()
	if err != nil {
		return err
	}
	if err := manifests.Apply(ctx, c, v1alpha1.FieldManagerController, objs); err != nil {
		return err
	}
	var last error
	if err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		probe := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": backupsv1alpha1.GroupVersion.String(), "kind": "BackupDriver",
			"metadata": map[string]any{"name": "backupaccess-probe"},
			"spec": map[string]any{"strategyKinds": []any{"Probe"}, "protocolVersions": []any{backupsv1alpha1.ProtocolVersion},
				"lease": map[string]any{"namespace": "probe", "name": "probe"}},
		}}
		if last = c.Create(ctx, probe, client.DryRunAll); apimeta.IsNoMatchError(last) {
			// backups.cozystack.io is not installed: no registration to
			// record a writer on.
			return true, nil
		} else if last != nil {
			return false, nil
		}
		if probe.GetAnnotations()[backupsv1alpha1.AnnotationRegisteredBy] == "" {
			last = fmt.Errorf("a dry-run BackupDriver has no annotation %s yet", backupsv1alpha1.AnnotationRegisteredBy)
			return false, nil
		}
		return true, nil
	}); err != nil {
		return fmt.Errorf("the backup driver policies are not in effect: %w (last: %v)", err, last)
	}
	return nil
}
