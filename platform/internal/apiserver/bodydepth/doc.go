// Package bodydepth refuses request bodies nested deeper than a limit
// before anything decodes them.
//
// Decoding, server-side apply's field tracking and schema validation of an
// application all walk the object, and several of them cost the square of
// its depth: a spec nested 10,000 levels deep (what kube-apiserver's JSON
// decoder allows) cost cozystack-api 20-35 s of CPU per request, even as
// a dry run. Real application specs are a few levels deep, so cozystack-api
// refuses a body nested deeper than MaxDepth (contract K1,
// contracts/schemas/v1alpha1/k1-application.md, "Request limits") with 400
// Bad Request, after one linear scan of the bytes.
package bodydepth
