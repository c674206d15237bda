package artifact

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// builtinResources are Kubernetes' built-in resources (kube-apiserver
// 1.3x, `kubectl api-resources`): plural, singular and short names. An
// application kind's names may not be any of these (CheckNames): kubectl
// resolves a name to one resource, so an application named "cm" or "pod"
// shadows the built-in one, or is shadowed by it. The operator checks the
// cluster's own discovery as well, CRDs included
// (platform/internal/operator/adinstaller, Shadowed).
var builtinResources = [][]string{
	// core/v1
	{"bindings", "binding"}, {"componentstatuses", "componentstatus", "cs"}, {"configmaps", "configmap", "cm"},
	{"endpoints", "endpoints", "ep"}, {"events", "event", "ev"}, {"limitranges", "limitrange", "limits"},
	{"namespaces", "namespace", "ns"}, {"nodes", "node", "no"}, {"persistentvolumeclaims", "persistentvolumeclaim", "pvc"},
	{"persistentvolumes", "persistentvolume", "pv"}, {"pods", "pod", "po"}, {"podtemplates", "podtemplate"},
	{"replicationcontrollers", "replicationcontroller", "rc"}, {"resourcequotas", "resourcequota", "quota"},
	{"secrets", "secret"}, {"serviceaccounts", "serviceaccount", "sa"}, {"services", "service", "svc"},
	// admissionregistration, apiextensions, apiregistration
	{"mutatingwebhookconfigurations", "mutatingwebhookconfiguration"}, {"validatingwebhookconfigurations", "validatingwebhookconfiguration"},
	{"validatingadmissionpolicies", "validatingadmissionpolicy"}, {"validatingadmissionpolicybindings", "validatingadmissionpolicybinding"},
	{"mutatingadmissionpolicies", "mutatingadmissionpolicy"}, {"mutatingadmissionpolicybindings", "mutatingadmissionpolicybinding"},
	{"customresourcedefinitions", "customresourcedefinition", "crd", "crds"}, {"apiservices", "apiservice"},
	// apps, autoscaling, batch
	{"controllerrevisions", "controllerrevision"}, {"daemonsets", "daemonset", "ds"}, {"deployments", "deployment", "deploy"},
	{"replicasets", "replicaset", "rs"}, {"statefulsets", "statefulset", "sts"},
	{"horizontalpodautoscalers", "horizontalpodautoscaler", "hpa"}, {"cronjobs", "cronjob", "cj"}, {"jobs", "job"},
	// authentication, authorization
	{"tokenreviews", "tokenreview"}, {"selfsubjectreviews", "selfsubjectreview"},
	{"localsubjectaccessreviews", "localsubjectaccessreview"}, {"selfsubjectaccessreviews", "selfsubjectaccessreview"},
	{"selfsubjectrulesreviews", "selfsubjectrulesreview"}, {"subjectaccessreviews", "subjectaccessreview"},
	// certificates, coordination, discovery, flowcontrol, networking, node, policy
	{"certificatesigningrequests", "certificatesigningrequest", "csr"}, {"clustertrustbundles", "clustertrustbundle"},
	{"leases", "lease"}, {"endpointslices", "endpointslice"},
	{"flowschemas", "flowschema"}, {"prioritylevelconfigurations", "prioritylevelconfiguration"},
	{"ingressclasses", "ingressclass"}, {"ingresses", "ingress", "ing"}, {"networkpolicies", "networkpolicy", "netpol"},
	{"ipaddresses", "ipaddress"}, {"servicecidrs", "servicecidr"}, {"runtimeclasses", "runtimeclass"},
	{"poddisruptionbudgets", "poddisruptionbudget", "pdb"},
	// rbac, resource, scheduling, storage
	{"clusterrolebindings", "clusterrolebinding"}, {"clusterroles", "clusterrole"}, {"rolebindings", "rolebinding"}, {"roles", "role"},
	{"deviceclasses", "deviceclass"}, {"resourceclaims", "resourceclaim"}, {"resourceclaimtemplates", "resourceclaimtemplate"},
	{"resourceslices", "resourceslice"}, {"priorityclasses", "priorityclass", "pc"},
	{"csidrivers", "csidriver"}, {"csinodes", "csinode"}, {"csistoragecapacities", "csistoragecapacity"},
	{"storageclasses", "storageclass", "sc"}, {"volumeattachments", "volumeattachment"},
	{"volumeattributesclasses", "volumeattributesclass", "vac"},
}

// BuiltinResource returns the built-in resource (its plural) whose plural,
// singular or short name is name, and whether there is one.
func BuiltinResource(name string) (string, bool) {
	for _, r := range builtinResources {
		if slices.Contains(r, name) {
			return r[0], true
		}
	}
	return "", false
}

// CheckNames refuses an application kind's plural, singular or short
// names that are a built-in resource's name or short name (BuiltinResource),
// each error naming the field and the resource it would shadow.
func CheckNames(app v1alpha1.ApplicationDefinitionApplication) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec", "application")
	check := func(fp *field.Path, name string) {
		if res, ok := BuiltinResource(name); ok {
			errs = append(errs, field.Forbidden(fp, fmt.Sprintf(
				"%q is a name of the built-in resource %s: an application's names may not shadow a built-in resource's (kubectl resolves a name to one resource); choose another", name, res)))
		}
	}
	check(p.Child("plural"), app.Plural)
	check(p.Child("singular"), app.Singular)
	for i, s := range app.ShortNames {
		check(p.Child("shortNames").Index(i), s)
	}
	return errs
}
