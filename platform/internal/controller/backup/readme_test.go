package backup_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/controller/backup/backuptest"
	"cozystack.io/platform/internal/install"
)

// Every object of README.md's "Backups" section is one the API server
// accepts: created with a server-side dry run and strict field validation
// (an unknown or misspelt field fails), in the namespaces it names.
func TestREADMEBackupExamples(t *testing.T) {
	need(t)
	data, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Backups\n")
	if !ok {
		t.Fatal(`README.md has no section "Backups"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
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
				t.Errorf("README.md, Backups: %s %s: %v", u.GetKind(), u.GetName(), err)
			}
		}
	}
	if n != 3 {
		t.Errorf("README.md, Backups: %d objects, want the BackupClass, the Plan and the RestoreJob", n)
	}
}
