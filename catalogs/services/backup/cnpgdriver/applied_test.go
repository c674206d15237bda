package cnpgdriver

import (
	"reflect"
	"testing"

	cnpgv1 "github.com/cloudnative-pg/cloudnative-pg/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// appliedBy gives back the driver's applied configuration of a Cluster
// from its managedFields, with the live values: the fields it owns, not
// those of other managers nor the ones defaulting added beside them.
func TestAppliedBy(t *testing.T) {
	cl := &cnpgv1.Cluster{}
	cl.Name, cl.Namespace = "postgres-db", "tenant"
	cl.Spec.Instances = 1
	cl.Spec.Backup = &cnpgv1.BackupConfiguration{
		Target: cnpgv1.BackupTargetStandby,
		VolumeSnapshot: &cnpgv1.VolumeSnapshotConfiguration{ClassName: "csi-snapclass", Online: new(bool),
			SnapshotOwnerReference: cnpgv1.ShapshotOwnerReferenceNone},
	}
	cl.Spec.Backup.BarmanObjectStore = &cnpgv1.BarmanObjectStoreConfiguration{}
	cl.Spec.Backup.BarmanObjectStore.DestinationPath = "s3://b/p"
	cl.Spec.Backup.BarmanObjectStore.EndpointURL = "https://s3.example.org"
	cl.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "helm-controller", Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:instances":{}}}`)}},
		// An Update of the driver's name is no applied configuration.
		{Manager: "backup-driver-cnpg", Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:backup":{"f:target":{}}}}`)}},
		{Manager: "backup-driver-cnpg", Operation: metav1.ManagedFieldsOperationApply,
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:backup":{"f:barmanObjectStore":{"f:destinationPath":{}},` +
				`"f:volumeSnapshot":{"f:className":{}}}}}`)}},
	}
	got, err := appliedBy(cl, "backup-driver-cnpg")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"spec": map[string]any{"backup": map[string]any{
		"barmanObjectStore": map[string]any{"destinationPath": "s3://b/p"},
		"volumeSnapshot":    map[string]any{"className": "csi-snapclass"},
	}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("applied configuration %v, want %v", got, want)
	}

	// An empty section applied ({}): the section, none of what defaulting
	// put in it.
	cl.ManagedFields[2].FieldsV1.Raw = []byte(`{"f:spec":{"f:backup":{"f:volumeSnapshot":{}}}}`)
	got, err = appliedBy(cl, "backup-driver-cnpg")
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]any{"spec": map[string]any{"backup": map[string]any{"volumeSnapshot": map[string]any{}}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("applied configuration %v, want %v", got, want)
	}

	// Another manager's: nothing.
	got, err = appliedBy(cl, "backup-driver-other")
	if err != nil || len(got) != 0 {
		t.Errorf("applied configuration of a stranger %v, %v, want none", got, err)
	}
}
