package backuptest

import (
	"encoding/json"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ShowCondition renders c as JSON for a failure message ("absent" for nil).
func ShowCondition(c *metav1.Condition) string {
	if c == nil {
		return "absent"
	}
	b, _ := json.Marshal(c)
	return string(b)
}

// StatusManagers returns, per field manager of obj's status subresource,
// whether it owns the field f (e.g. "f:binding").
func StatusManagers(obj metav1.Object, f string) map[string]bool {
	out := map[string]bool{}
	for _, e := range obj.GetManagedFields() {
		if e.Subresource != "status" {
			continue
		}
		owns := e.FieldsV1 != nil && strings.Contains(string(e.FieldsV1.Raw), `"`+f+`"`)
		out[e.Manager] = out[e.Manager] || owns
	}
	return out
}

// OwnsStatusField reports whether manager's entry for obj's status
// subresource holds the field f (e.g. "f:claim").
func OwnsStatusField(obj metav1.Object, manager, f string) bool {
	return StatusManagers(obj, f)[manager]
}
