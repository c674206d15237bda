package mariadbdriver_test

import (
	"context"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"cozystack.io/catalogs/services/backup/mariadbdriver"
	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// Parameters are strict: unknown keys, a missing or double storage target,
// bad values and unparsable templates are refused before anything runs,
// naming the field.
func TestValidateParameters(t *testing.T) {
	for _, tc := range []struct {
		name, params, field string
		template            bool
	}{
		{"s3", params, "", false},
		{"pvc", `{"persistentVolumeClaim":{"size":"1Gi"},"maxRetention":"720h","waitTimeout":"5m"}`, "", false},
		{"unknown top-level key", `{"persistentVolumeClaim":{"size":"1Gi"},"schedule":"daily"}`, "schedule", false},
		{"unknown nested key", `{"s3":{"bucket":"b","endpoint":"e","credentialsSecret":"c","acl":"private"}}`, "s3.acl", false},
		{"no storage", `{}`, "s3", false},
		{"two storages", `{"s3":{"bucket":"b","endpoint":"e","credentialsSecret":"c"},"persistentVolumeClaim":{"size":"1Gi"}}`, "persistentVolumeClaim", false},
		{"s3 without bucket", `{"s3":{"endpoint":"e","credentialsSecret":"c"}}`, "s3.bucket", false},
		{"s3 without credentials", `{"s3":{"bucket":"b","endpoint":"e"}}`, "s3.credentialsSecret", false},
		{"bad size", `{"persistentVolumeClaim":{"size":"lots"}}`, "persistentVolumeClaim.size", false},
		{"bad compression", `{"persistentVolumeClaim":{"size":"1Gi"},"compression":"zstd"}`, "compression", false},
		{"bad maxRetention", `{"persistentVolumeClaim":{"size":"1Gi"},"maxRetention":"30 days"}`, "maxRetention", false},
		{"bad waitTimeout", `{"persistentVolumeClaim":{"size":"1Gi"},"waitTimeout":"-1s"}`, "waitTimeout", false},
		{"unclosed template", `{"s3":{"bucket":"b","endpoint":"e","credentialsSecret":"c","prefix":"{{ .Application"}}`, "s3.prefix", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := mariadbdriver.Driver{}.ValidateParameters(context.Background(), driver.OperationBackup,
				v1alpha1.Strategy{Kind: mariadbdriver.StrategyKind, Parameters: &apiextensionsv1.JSON{Raw: []byte(tc.params)}})
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("valid parameters refused: %v", err)
			case tc.field == "":
				return
			case err == nil:
				t.Fatal("accepted")
			case tc.template:
				if te, ok := err.(*driver.TemplateError); !ok || te.Field != tc.field {
					t.Fatalf("got %v, want a TemplateError of %s", err, tc.field)
				}
			default:
				pe, ok := err.(*driver.ParameterError)
				if !ok || pe.Field != tc.field || !strings.Contains(err.Error(), tc.field) {
					t.Fatalf("got %#v (%v), want a ParameterError of %s", err, err, tc.field)
				}
			}
		})
	}
}
