// Package helm finds the edges Helm charts make between modules:
//
//   - helm-include: include/template of a name another module's chart defines;
//   - unknown-include: include/template of a name no chart of the tree defines;
//   - helm-lookup, helm-capabilities: lookup and .Capabilities.APIVersions.Has
//     on an API group another module owns;
//   - dynamic-include, dynamic-lookup, dynamic-capabilities: the same calls
//     with an argument computed at render time that does not resolve
//     statically (see evalContext for what does);
//   - crd-kind: `apiVersion: group/...` in template YAML, or a
//     CustomResourceDefinition the chart ships (under crds/, templates/ or
//     in any other YAML file of the chart, such as files/), for a group
//     another module owns;
//   - chart-dependency: a Chart.yaml dependency on another module's chart
//     (a file:// path into it, or the name of a chart it owns or publishes),
//     a subchart that is a symbolic link to it or an unlisted vendored copy
//     of it, or a link inside a chart to another module's files;
//   - chart-symlink: a symbolic link that dangles, loops or leaves the tree;
//   - template-parse: a template that does not parse with Helm's functions.
//
// Templates are parsed with text/template/parse and walked as syntax trees
// by the walk the conformance rules share (cozystack.io/contracts/helmtemplate;
// template.go is its Visitor);
// a regex scan stands in only for a file that does not parse, and that file
// gets a template-parse finding of its own.
//
// Charts are read as Helm's loader reads them, following symbolic links
// (see walk.go for the limits). A chart belongs to the module its files lie
// in; a vendored chart is another module's only when the configuration says
// it is a copy of that module's chart (config.Config.CopyOwner), and then
// its own references are not scanned. Include resolution follows Helm,
// where every template of a chart and of all its dependencies shares one
// namespace: a name is first looked for in the chart, its subcharts
// (directories, links and .tgz archives under charts/) and its dependencies
// found in the tree (file:// paths, or a chart of the same name). Only then
// is the rest of the tree searched.
package helm
