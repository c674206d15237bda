package cnpgdriver

import (
	"context"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

func TestValidateParameters(t *testing.T) {
	// fix is what the refusals of one method's section beside the other
	// method say to do.
	fix := map[string]string{
		"snapshot options with object store":   "remove it, or set method: volumeSnapshot",
		"snapshot options with default method": "remove it, or set method: volumeSnapshot",
		"object store with snapshots":          "remove it, or set method: barmanObjectStore",
	}
	for _, tc := range []struct {
		name, params, field string
	}{
		{"object store", `{"barmanObjectStore":{"destinationPath":"s3://b/p","credentialsSecret":"s3"}}`, ""},
		{"volume snapshot", `{"method":"volumeSnapshot"}`, ""},
		{"unknown key", `{"barmanObjectStore":{"destinationPath":"s3://b/p","credentialsSecret":"s3","bucket":"x"}}`, "barmanObjectStore.bucket"},
		{"unknown top key", `{"method":"volumeSnapshot","retention":"7d"}`, "retention"},
		{"bad method", `{"method":"plugin"}`, "method"},
		{"no store", `{}`, "barmanObjectStore"},
		{"no path", `{"barmanObjectStore":{"credentialsSecret":"s3"}}`, "barmanObjectStore.destinationPath"},
		{"no secret", `{"barmanObjectStore":{"destinationPath":"s3://b/p"}}`, "barmanObjectStore.credentialsSecret"},
		{"bad wait", `{"method":"volumeSnapshot","waitTimeout":"soon"}`, "waitTimeout"},
		{"snapshot options", `{"method":"volumeSnapshot","volumeSnapshot":{"className":"csi-snapclass","online":false}}`, ""},
		{"cold snapshot", `{"method":"volumeSnapshot","volumeSnapshot":{"online":false}}`, ""},
		{"hot snapshot", `{"method":"volumeSnapshot","volumeSnapshot":{"online":true}}`, ""},
		{"snapshot class only", `{"method":"volumeSnapshot","volumeSnapshot":{"className":"csi-snapclass"}}`, ""},
		{"empty snapshot options", `{"method":"volumeSnapshot","volumeSnapshot":{}}`, ""},
		{"unknown snapshot key", `{"method":"volumeSnapshot","volumeSnapshot":{"online":false,"walClassName":"x"}}`, "volumeSnapshot.walClassName"},
		{"online not a bool", `{"method":"volumeSnapshot","volumeSnapshot":{"online":"no"}}`, "online"},
		{"bad snapshot class", `{"method":"volumeSnapshot","volumeSnapshot":{"className":"CSI_Snap"}}`, "volumeSnapshot.className"},
		{"snapshot options with object store", `{"method":"barmanObjectStore","barmanObjectStore":{"destinationPath":"s3://b/p","credentialsSecret":"s3"},"volumeSnapshot":{"online":true}}`, "volumeSnapshot"},
		{"snapshot options with default method", `{"barmanObjectStore":{"destinationPath":"s3://b/p","credentialsSecret":"s3"},"volumeSnapshot":{}}`, "volumeSnapshot"},
		{"object store with snapshots", `{"method":"volumeSnapshot","barmanObjectStore":{"destinationPath":"s3://b/p","credentialsSecret":"s3"}}`, "barmanObjectStore"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := New().ValidateParameters(context.Background(), driver.OperationBackup,
				v1alpha1.Strategy{Kind: StrategyKind, Parameters: &apiextensionsv1.JSON{Raw: []byte(tc.params)}})
			if tc.field == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if !driver.IsParameterError(err) {
				t.Fatalf("want a ParameterError naming %s, got %v", tc.field, err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("error %q does not name %s", err, tc.field)
			}
			if f := fix[tc.name]; !strings.Contains(err.Error(), f) {
				t.Fatalf("error %q does not say %q", err, f)
			}
		})
	}
}

func TestRestoreOverlay(t *testing.T) {
	o := RestoreOverlay(DriverData{Method: "barmanObjectStore", BackupName: "b", DestinationPath: "s3://b/p", ServerName: "postgres-db", BackupID: "20260101T000000"})
	rec := o["bootstrap"].(map[string]any)["recovery"].(map[string]any)
	if rec["destinationPath"] != "s3://b/p" || rec["serverName"] != "postgres-db" || rec["backupID"] != "20260101T000000" || rec["backupName"] != nil {
		t.Errorf("object-store overlay %v", rec)
	}
	o = RestoreOverlay(DriverData{Method: "volumeSnapshot", BackupName: "b"})
	rec = o["bootstrap"].(map[string]any)["recovery"].(map[string]any)
	if rec["backupName"] != "b" || len(rec) != 1 {
		t.Errorf("volume-snapshot overlay %v", rec)
	}
}
