// Package core is the storage of the core.cozystack.io/v1alpha1 API served
// by cozystack-api beside apps.cozystack.io: resources the platform derives
// from Kubernetes objects for tenants, read-only.
//
// TenantSecrets (tenantsecret.go) are the one way tenant users read Secrets
// (contract K5, k5-cozy-lib.md, "Tenant roles"): the tenant roles grant no
// verb on core Secrets, because drivers and the platform keep credentials a
// tenant must not read beside the objects that use them (a CNPG Cluster
// reads its object store's credentials from a Secret in its own namespace).
// A TenantSecret is a Secret of an application release, selected by the
// release's ApplicationDefinition spec.secrets rules (rules.go; contract
// K1, k1-application.md); every other Secret is answered 404.
//
// Authorization: kube-apiserver authorizes each request on
// core.cozystack.io tenantsecrets with the tenant's own RBAC before it
// proxies it, and cozystack-api authorizes it again (delegated
// SubjectAccessReview); the Secrets are then read with cozystack-api's own
// identity, which needs get, list and watch on Secrets.
package core
