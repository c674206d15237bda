// Package names derives the names, labels and annotations of everything
// cozystack-operator creates, so that two different inputs never map to the
// same object (the system we follow collapses "." to "-", so there the
// Packages "acme.web" and "acme-web" collide; docs/operator/catalogs.md, "Catalog
// delivery", "Names", states the rule).
//
// The rule: every derived name is a readable prefix (the inputs joined with
// "-", with any character a DNS label cannot hold replaced by "-", cut to
// fit) followed by a separator and a hash of the exact inputs. Because the
// hash is always there, the readable part may be ambiguous or truncated
// without two inputs ever sharing a name.
//
// # Reserved release names
//
// A component's HelmRelease is named "<readable>--<10 hex digits>"
// (HelmRelease): the double hyphen before the hash marks it. Applications
// (apps.cozystack.io) are stored as HelmReleases too, named
// "<release prefix><application name>" in tenant namespaces, where Package
// components may also be installed; if an application could take a
// component's name first, the Package would stall on a Conflict until the
// tenant acted. ReservedRelease states the rule cozystack-api enforces so
// that none can: any name holding "--" followed by 10 lowercase hex digits
// that end the name or are followed by "-" (which also covers the
// component's "<release>-installer" and "<release>-catalog-values", the
// names a chart would give its ServiceAccount and ConfigMaps if installed
// under them). Every name HelmRelease, Installer and CatalogValues return
// is reserved.
//
// # Ownership
//
// The labels here (v1alpha1.LabelManagedBy, LabelPackage, LabelComponent) and the
// annotation AnnotationPackage only select and describe: anyone who can
// write an object can set them, a tenant included (an application's labels
// reach its HelmRelease). What the operator owns is decided by the
// object's controller reference, carrying the owning Package's UID (see
// package packagereconciler, and docs/operator/catalogs.md, "Catalog delivery",
// "Ownership").
package names
