package v1alpha1

// ReasonAPIGroupNotGranted (PackageSource Ready=False): a rule or tenant
// role of the catalog names an API group that is neither the catalog's
// own (provides.apiGroups) nor shared with it (provides.sharedAPIGroups)
// by a served catalog its variants depend on; nothing of the revision is
// published (contracts/artifact/README.md, "Application rights").
const ReasonAPIGroupNotGranted = "APIGroupNotGranted"
