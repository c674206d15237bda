package velerodriver

import (
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// LabelInstance is the label every object of a release carries, with the
// release name as value (charts/vm-instance and charts/vm-disk,
// templates/_helpers.tpl).
const LabelInstance = "app.kubernetes.io/instance"

// releasePrefixes are the release prefixes of this catalog's kinds
// (applicationdefinitions/*.yaml, release.prefix).
var releasePrefixes = map[string]string{
	"VMInstance": "vm-instance-",
	"VMDisk":     "vm-disk-",
}

// selectors returns the label selectors (OR'ed: Velero's
// spec.orLabelSelectors) of the application's objects: its release's, and
// for a VMInstance those of the VMDisks its spec (the job's
// application snapshot) attaches, whose DataVolumes it mounts. A kind
// without a known prefix and without parameter releasePrefix is a
// *driver.ParameterError.
func selectors(app v1alpha1.ApplicationRef, snapshot *apiextensionsv1.JSON, p *Parameters) ([]*metav1.LabelSelector, error) {
	prefix := p.ReleasePrefix
	if prefix == "" {
		prefix = releasePrefixes[app.Kind]
	}
	if prefix == "" {
		return nil, &driver.ParameterError{Field: "releasePrefix",
			Message: fmt.Sprintf("required for kind %s (its ApplicationDefinition's release.prefix): the driver knows only VMInstance and VMDisk", app.Kind)}
	}
	out := []*metav1.LabelSelector{{MatchLabels: map[string]string{LabelInstance: prefix + app.Name}}}
	if app.Kind != "VMInstance" || snapshot == nil || len(snapshot.Raw) == 0 {
		return out, nil
	}
	var spec struct {
		Disks []struct {
			Name string `json:"name"`
		} `json:"disks"`
	}
	// A snapshot this driver cannot read selects the release alone: the
	// kubevirt-velero-plugin still adds the DataVolumes the
	// VirtualMachine mounts.
	if err := json.Unmarshal(snapshot.Raw, &spec); err != nil {
		return out, nil
	}
	seen := map[string]bool{}
	for _, d := range spec.Disks {
		if d.Name == "" || seen[d.Name] {
			continue
		}
		seen[d.Name] = true
		out = append(out, &metav1.LabelSelector{MatchLabels: map[string]string{LabelInstance: releasePrefixes["VMDisk"] + d.Name}})
	}
	return out, nil
}

// objectName derives the name of a Velero object in Velero's namespace
// from the object (job or Backup) in namespace ns named name:
// "<ns>.<name>-<suffix>" (driver.ObjectName), so two namespaces' jobs of one
// name never derive the same name (a namespace holds no dot, so the split
// is unambiguous).
func objectName(ns, name, suffix string) string {
	return driver.ObjectName(ns+"."+name, suffix)
}
