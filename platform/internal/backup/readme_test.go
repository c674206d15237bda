package backup_test

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/backup/backuptest"
	"cozystack.io/platform/internal/install"

	"cozystack.io/contracts/doctest"
)

// Every object of the "Backups" sections of docs/operator/backups.md (the
// cluster operator's BackupClass) and docs/tenant/backups.md (the tenant's
// Plan and RestoreJob) is one the API server accepts: created with a
// server-side dry run and strict field validation (an unknown or misspelt
// field fails), in the namespaces it names.
func TestREADMEBackupExamples(t *testing.T) {
	need(t)
	docs := []string{"docs/operator/backups.md", "docs/tenant/backups.md"}
	var section string
	for _, doc := range docs {
		section += doctest.Section(t, doc, "Backups") + "\n"
	}
	if err := install.CRDs(backuptest.Context(t), env.Config, ""); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, block := range strings.Split(section, "```yaml\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(block)), 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); err != nil {
				break
			}
			if len(u.Object) == 0 {
				continue
			}
			n++
			if ns := u.GetNamespace(); ns != "" {
				backuptest.Namespace(t, c, ns)
			}
			if err := c.Create(backuptest.Context(t), u, client.DryRunAll, client.FieldValidation("Strict")); err != nil {
				t.Errorf("%v, Backups: %s %s: %v", docs, u.GetKind(), u.GetName(), err)
			}
		}
	}
	if n != 3 {
		t.Errorf("%v, Backups: %d objects, want the BackupClass, the Plan and the RestoreJob", docs, n)
	}
}
