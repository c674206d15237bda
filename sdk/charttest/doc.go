// Package charttest renders a catalog's application charts the way
// helm-controller does (Helm's loader, values coalescing, values.schema.json
// validation and engine), with the cluster values (contract K2) a tenant
// namespace carries, and turns the result into objects for golden files and
// server-side dry-run. It also walks values schemas for the K4 checks,
// writes payloads into every string of a values schema to check that no
// tenant string adds an object to a release ([RunInjection]), and picks the
// CRDs a dry-run installs. Only tests (and test-like checks) use
// it; every catalog shares it through cozystack.io/sdk, since a catalog may
// not import another's code.
//
// # Shapes
//
//   - Values and schemas are map[string]any trees as JSON or YAML decode
//     them (sigs.k8s.io/yaml): objects map[string]any, arrays []any,
//     numbers float64.
//   - A render ([Render]) is map[string]string: the template's path in
//     the chart ("<chart>/templates/<file>", "<chart>/charts/<dep>/...")
//     to the manifest text it produced, possibly empty. [Manifest] and
//     [Objects] read it in template-path order.
//   - A schema path from [StrictnessViolations] is one string, "/" joined,
//     "" for the root: "/*" steps into a map's items (additionalProperties
//     as a schema), "/[]" into an array's items. A path from [StrictPaths]
//     is a []string of property names, nil for the root, with "x" standing
//     for a map's item; [PathString] prints it.
//   - CRDs are *apiextensionsv1.CustomResourceDefinition, decoded from
//     multi-document YAML files whose other kinds are skipped.
//   - An injection [Target] is a place of a values schema where a tenant
//     writes a string: Path is property names, "*" for a map's value and
//     "[]" for an array's item; Key marks the keys of the map at Path.
//     [ReleaseObjects] gives a render's objects as [ObjectID]s
//     (apiVersion, kind, namespace as written, "" for the release's,
//     name), sorted.
//
// # Errors
//
// Nothing here panics on a bad chart or schema; every failure is an error:
//   - [Load]: Helm's loader errors (missing Chart.yaml, a bad dependency
//     archive, ...).
//   - [Render]: a values schema violation is Helm's error
//     ("values don't meet the specifications of the schema(s) ...") naming
//     the offending key (so a test can look for [UnknownKey]); a template
//     error (required, fail, a bad function call) is Helm's engine error
//     naming the template. Dependency processing errors come first.
//     [RenderUnvalidated] gives the same errors but the schema's.
//   - [ReleaseObjects]: Helm's install error for a manifest that does not
//     parse ("YAML parse error on <template>: ...").
//   - [CheckInjection]: an error for a chart that does not load or has no
//     values schema; a baseline that does not render is the
//     [InjectionCheck]'s Baseline, and each payload's render error its
//     [InjectionResult]'s Err (a refusal, not a failure).
//   - [Objects]: a document that does not decode is an error prefixed by
//     its template's path.
//   - [ReadValues]: a YAML error.
//   - [WithoutReservedKeys]: an error when the schema has no properties or
//     lacks one of the [ReservedKeys].
//   - [ChartCRDs], [InstallCRDs]: file and decoding errors naming the file
//     and document; an API error from installing, prefixed by which set
//     (the upstream CRDs or the charts') failed.
package charttest
