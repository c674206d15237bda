package jobdriver

import (
	"encoding/json"

	batchv1 "k8s.io/api/batch/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"cozystack.io/sdk/backup/driver"
)

// Parameters are the strategy parameters of kind Job (package doc).
type Parameters struct {
	Backup     *JobTemplate      `json:"backup,omitempty"`
	Restore    *JobTemplate      `json:"restore,omitempty"`
	Cleanup    *JobTemplate      `json:"cleanup,omitempty"`
	DriverData map[string]string `json:"driverData,omitempty"`
	// RestoreOverlay is any JSON object whose strings are templates,
	// recorded in the Backup's spec.restoreOverlay.
	RestoreOverlay map[string]any `json:"restoreOverlay,omitempty"`
	Secrets        []string       `json:"secrets,omitempty"`
}

// JobTemplate is a batch/v1 Job's labels, annotations and spec, whose
// string values are templates.
type JobTemplate struct {
	Metadata TemplateMeta    `json:"metadata,omitempty"`
	Spec     batchv1.JobSpec `json:"spec"`
}

// TemplateMeta is the part of a Job's metadata a template may set.
type TemplateMeta struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// rawParameters keeps each template as JSON, to be rendered before it is
// decoded.
type rawParameters struct {
	Backup         *apiextensionsv1.JSON `json:"backup,omitempty"`
	Restore        *apiextensionsv1.JSON `json:"restore,omitempty"`
	Cleanup        *apiextensionsv1.JSON `json:"cleanup,omitempty"`
	DriverData     *apiextensionsv1.JSON `json:"driverData,omitempty"`
	RestoreOverlay *apiextensionsv1.JSON `json:"restoreOverlay,omitempty"`
	Secrets        []string              `json:"secrets,omitempty"`
}

// validate decodes p strictly and parses every template; op's template
// must be present. Errors are *driver.ParameterError or
// *driver.TemplateError.
func validate(op driver.Operation, p *apiextensionsv1.JSON) error {
	var typed Parameters
	if err := driver.DecodeParameters(p, &typed); err != nil {
		return err
	}
	switch {
	case op == driver.OperationBackup && typed.Backup == nil:
		return &driver.ParameterError{Field: "backup", Message: "required: the Job template of a backup"}
	case op == driver.OperationRestore && typed.Restore == nil:
		return &driver.ParameterError{Field: "restore", Message: "required: the Job template of a restore"}
	}
	var raw rawParameters
	if err := driver.DecodeParameters(p, &raw); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    *apiextensionsv1.JSON
	}{{"backup", raw.Backup}, {"restore", raw.Restore}, {"cleanup", raw.Cleanup}, {"driverData", raw.DriverData}, {"restoreOverlay", raw.RestoreOverlay}} {
		if err := driver.ParseJSON(f.name, f.v); err != nil {
			return err
		}
	}
	return nil
}

// render renders the template field of p over data and decodes it strictly.
func render(field string, tmpl *apiextensionsv1.JSON, data any) (*JobTemplate, error) {
	out, err := driver.RenderJSON(field, tmpl, data)
	if err != nil {
		return nil, err
	}
	var t JobTemplate
	if err := driver.DecodeParameters(out, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// renderData renders the driverData templates.
func renderData(tmpl *apiextensionsv1.JSON, data any) (map[string]any, error) {
	out, err := driver.RenderJSON("driverData", tmpl, data)
	if err != nil || out == nil {
		return map[string]any{}, err
	}
	m := map[string]any{}
	return m, json.Unmarshal(out.Raw, &m)
}
