package driver

import (
	"errors"
	"fmt"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// RunError ends a run: the SDK writes phase Failed with Ready=False,
// Reason and Message (contract k7, "Runs"). Return it (or wrap it) from any
// Driver method; errors of any other type are transient and retried with
// backoff.
type RunError struct {
	// Reason is a Ready reason of contract k7, e.g.
	// v1alpha1.ReasonBackendFailed.
	Reason string
	// Message says what failed and what to do, for a person.
	Message string
}

func (e *RunError) Error() string { return e.Reason + ": " + e.Message }

// Fail returns a *RunError with reason and a formatted message.
func Fail(reason, format string, args ...any) error {
	return &RunError{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// TemplateError is a template in the strategy's parameters that did not
// parse or execute. Field is the path of the template in the parameters
// (e.g. "backup.spec.template.spec.containers[0].args[1]"), Err the
// text/template error. It ends the run Failed with reason TemplateError.
type TemplateError struct {
	Field string
	Err   error
}

func (e *TemplateError) Error() string {
	return fmt.Sprintf("template in parameters field %s: %v", e.Field, e.Err)
}

func (e *TemplateError) Unwrap() error { return e.Err }

// ParameterError is an unknown or invalid key of the strategy's
// parameters. Field is its path (e.g. "backup.spec.foo"). It ends the run
// Failed with reason InvalidParameters.
type ParameterError struct {
	Field   string
	Message string
}

func (e *ParameterError) Error() string {
	if e.Field == "" {
		return "parameters: " + e.Message
	}
	return fmt.Sprintf("parameters field %s: %s", e.Field, e.Message)
}

// ConflictError is a backend object that exists under the name a run
// derived for it but was not created by the run (its label
// backups.cozystack.io/run is absent or names another run). It ends the run
// Failed with reason BackendFailed naming the object.
type ConflictError struct {
	// Object is "<kind> <namespace>/<name>".
	Object string
	// Run is the run's UID; Found the run label on the existing object
	// ("" when absent).
	Run, Found string
}

func (e *ConflictError) Error() string {
	if e.Found == "" {
		return fmt.Sprintf("%s exists and was not created by this run (no label %s): delete or rename it, then create a new job", e.Object, v1alpha1.LabelRun)
	}
	return fmt.Sprintf("%s exists and belongs to another run (label %s=%s, this run is %s): delete or rename it, then create a new job", e.Object, v1alpha1.LabelRun, e.Found, e.Run)
}

// terminal maps an error returned by a Driver method to the Ready reason
// and message that end the run, or ok=false for a transient error.
func terminal(err error) (reason, message string, ok bool) {
	var (
		re *RunError
		te *TemplateError
		pe *ParameterError
		ce *ConflictError
	)
	switch {
	case err == nil:
		return "", "", false
	case errors.As(err, &te):
		return v1alpha1.ReasonTemplateError, te.Error() + "; nothing was created on the backend", true
	case errors.As(err, &pe):
		return v1alpha1.ReasonInvalidParameters, pe.Error(), true
	case errors.As(err, &ce):
		return v1alpha1.ReasonBackendFailed, ce.Error(), true
	case errors.As(err, &re):
		return re.Reason, re.Message, true
	}
	return "", "", false
}
