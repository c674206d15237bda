package jobdriver

import (
	"encoding/json"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// TemplateData is the data templates see, as maps so a missing key is an
// error (missingkey=error) wherever it is:
//
//	.Application {APIGroup, Kind, Name, Namespace}  the application backed up,
//	                                                 restored into, or reclaimed
//	.Job         {Kind, Name, Namespace, UID}       the BackupJob, RestoreJob or Backup
//	.Snapshot    the application's spec when backed up ({} when none)
//	.Backup      {Name, Namespace, DriverData}      restore and cleanup only
//	.Secrets     {<source name>: <copy's name>}     the projected parameters.secrets
type TemplateData = map[string]any

func appData(a v1alpha1.ApplicationRef, ns string) map[string]any {
	return map[string]any{"APIGroup": a.APIGroup, "Kind": a.Kind, "Name": a.Name, "Namespace": ns}
}

func jobData(kind, name, ns, uid string) map[string]any {
	return map[string]any{"Kind": kind, "Name": name, "Namespace": ns, "UID": uid}
}

func backupData(b *v1alpha1.Backup) map[string]any {
	return map[string]any{"Name": b.Name, "Namespace": b.Namespace, "DriverData": object(b.Spec.DriverData)}
}

// object decodes a JSON object, {} when absent or not an object.
func object(j *apiextensionsv1.JSON) map[string]any {
	m := map[string]any{}
	if j != nil && len(j.Raw) > 0 {
		_ = json.Unmarshal(j.Raw, &m)
	}
	return m
}
