{{/*
The tenant's name: the release is the HelmRelease of the Tenant application,
named "tenant-<name>" (the ApplicationDefinition's release prefix).
*/}}
{{- define "tenant.name" -}}
{{- trimPrefix "tenant-" .Release.Name -}}
{{- end -}}

{{/*
The tenant's namespace: "tenant-<name>" under the root tenant (namespace
tenant-root), "<parent namespace>-<name>" deeper. The application API
refuses names for which this exceeds 63 characters (the
ValidatingAdmissionPolicy shipped with the Tenant kind); the chart checks
again so nothing is ever created with a cut name.
*/}}
{{- define "tenant.namespace" -}}
{{- $name := include "tenant.name" . -}}
{{- $ns := printf "%s-%s" .Release.Namespace $name -}}
{{- if eq .Release.Namespace "tenant-root" -}}
{{- $ns = printf "tenant-%s" $name -}}
{{- end -}}
{{- if gt (len $ns) 63 -}}
{{- fail (printf "tenant namespace %q is longer than 63 characters: choose a shorter tenant name" $ns) -}}
{{- end -}}
{{- $ns -}}
{{- end -}}

{{/*
The parent's _namespace values (contract K2), required: a tenant never
renders without its parent's host.
*/}}
{{- define "tenant.parent" -}}
{{- $parent := required "values _namespace are missing: the ConfigMap cozystack-values of the parent namespace (projected by cozystack-controller) is not there yet" (index .Values "_namespace") -}}
{{- $_ := required "_namespace.host is missing or empty: the parent namespace has no label namespace.cozystack.io/host" $parent.host -}}
{{- toJson $parent -}}
{{- end -}}

{{/*
The tenant's own _namespace values: host and the module namespaces, each
the tenant's own namespace when it runs the module, else the parent's.
*/}}
{{- define "tenant.values" -}}
{{- $parent := include "tenant.parent" . | fromJson -}}
{{- $ns := include "tenant.namespace" . -}}
{{- $v := dict "host" (.Values.host | default (printf "%s.%s" (include "tenant.name" .) $parent.host)) -}}
{{- range $module := list "ingress" "monitoring" "etcd" "seaweedfs" "gateway" -}}
{{- if index $.Values $module -}}
{{- $_ := set $v $module $ns -}}
{{- else if index $parent $module -}}
{{- $_ := set $v $module (index $parent $module) -}}
{{- end -}}
{{- end -}}
{{- $sc := .Values.schedulingClass | default ($parent.schedulingClass | default "") -}}
{{- if $sc -}}
{{- $_ := set $v "schedulingClass" $sc -}}
{{- end -}}
{{- toJson $v -}}
{{- end -}}

{{/*
The Pod Security Standard of the tenant's namespace: the cluster value
tenant-pod-security (contract K2), which only the cluster operator sets in
ClusterValues; restricted when absent. Any other value fails the render.
*/}}
{{- define "tenant.podSecurity" -}}
{{- $level := index (.Values._cluster | default dict) "tenant-pod-security" | default "restricted" -}}
{{- if not (has $level (list "restricted" "baseline" "privileged")) -}}
{{- fail (printf "_cluster.tenant-pod-security is %q: want restricted, baseline or privileged (ClusterValues .spec.podSecurity.tenantLevel)" $level) -}}
{{- end -}}
{{- $level -}}
{{- end -}}
