package driver

import (
	"errors"
	"regexp"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	sigsjson "sigs.k8s.io/json"
)

var unknownField = regexp.MustCompile(`^unknown field "(.*)"$`)

// DecodeParameters decodes the strategy's parameters into into (a pointer
// to a struct with json tags) strictly: an unknown key at any depth, a
// duplicate key or a value of the wrong type is a *ParameterError naming
// the key's path (e.g. "backup.spec.foo"), which ends the run Failed with
// reason InvalidParameters. Nil parameters decode as {}.
func DecodeParameters(params *apiextensionsv1.JSON, into any) error {
	raw := []byte("{}")
	if params != nil && len(params.Raw) > 0 {
		raw = params.Raw
	}
	strict, err := sigsjson.UnmarshalStrict(raw, into)
	if err != nil {
		return &ParameterError{Message: strings.TrimPrefix(err.Error(), "json: ")}
	}
	if len(strict) > 0 {
		var msgs []string
		first := ""
		for _, e := range strict {
			if m := unknownField.FindStringSubmatch(e.Error()); m != nil {
				if first == "" {
					first = m[1]
				}
				msgs = append(msgs, "unknown key "+m[1])
				continue
			}
			msgs = append(msgs, e.Error())
		}
		return &ParameterError{Field: first, Message: strings.Join(msgs, "; ") + " (remove it or fix its spelling in the BackupClass's strategy parameters)"}
	}
	return nil
}

// IsParameterError reports whether err is or wraps a *ParameterError.
func IsParameterError(err error) bool {
	var pe *ParameterError
	return errors.As(err, &pe)
}
