package bodydepth

import (
	"bytes"
	"fmt"
	"mime"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/yaml"
)

// MaxDepth is cozystack-api's limit on the nesting of a request body: the
// number of objects and arrays open at once, the object itself counting
// one. An application's spec may thus nest 98 levels below spec; the
// deepest schema of the catalogs here needs 6. kube-apiserver allows
// 10,000.
const MaxDepth = 100

// Check returns a 400 StatusError when data, a request body of the given
// Content-Type, nests deeper than max. JSON is scanned as it is; YAML
// (application/yaml, application/apply-patch+yaml) that is not JSON is
// converted to JSON first, as the API machinery decodes it; a body that
// does not convert is left to the decoder to refuse. Other types
// (protobuf is not served) pass.
func Check(data []byte, contentType string, max int) error {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mediaType = contentType
	}
	switch mediaType {
	case "application/json", "application/merge-patch+json", "application/strategic-merge-patch+json", "application/json-patch+json", "":
	case "application/yaml", "application/apply-patch+yaml":
		if trimmed := bytes.TrimSpace(data); len(trimmed) == 0 || (trimmed[0] != '{' && trimmed[0] != '[') {
			converted, err := yaml.YAMLToJSON(data)
			if err != nil {
				return nil
			}
			data = converted
		}
	default:
		return nil
	}
	if d := Depth(data, max); d > max {
		return apierrors.NewBadRequest(fmt.Sprintf(
			"the request body nests more than %d levels of objects and arrays, cozystack-api's limit (contract K1, Request limits); an application's spec nests a few levels: send the object its schema describes", max))
	}
	return nil
}

// Depth returns the deepest nesting of objects and arrays in the JSON
// text data, scanning it once; it stops, returning max+1, as soon as the
// nesting passes max. Brackets inside strings do not count; data need not
// be valid JSON (the decoder judges that).
func Depth(data []byte, max int) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > deepest {
				deepest = depth
				if deepest > max {
					return deepest
				}
			}
		case '}', ']':
			depth--
		}
	}
	return deepest
}
