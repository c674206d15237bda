{{/*
Tenant RBAC subjects. The users of a tenant are the members of groups
named <tenant namespace>-<level>, one per access level, in increasing
order of rights: view, use, admin, super-admin. A tenant's users also have
rights in the tenants below it, so a subject list covers the release's
tenant namespace and every ancestor tenant namespace: by the tenant naming
rule, tenant-root is the root, "tenant-<name>" its children and
"<parent namespace>-<name>" deeper (tenant names have no "-").
*/}}

{{/*
cozy-lib.rbac.tenantSubjects (list LEVEL $): a YAML list of RBAC subjects
(kind Group) holding at least LEVEL (view, use, admin or super-admin) in
the release's tenant namespace: every level from LEVEL up, for that
namespace and each ancestor tenant namespace, nearest first. Fails when
.Release.Namespace is not a tenant namespace (tenant-root or tenant-*).
*/}}
{{- define "cozy-lib.rbac.tenantSubjects" -}}
{{- $level := index . 0 -}}
{{- $root := index . 1 -}}
{{- $levels := list "view" "use" "admin" "super-admin" -}}
{{- if not (has $level $levels) -}}
{{- fail (printf "cozy-lib: tenant access level %q: want view, use, admin or super-admin" (toString $level)) -}}
{{- end -}}
{{- $from := 0 -}}
{{- range $i, $l := $levels -}}
{{- if eq $l $level -}}{{- $from = $i -}}{{- end -}}
{{- end -}}
{{- $subjects := list -}}
{{- range $ns := include "cozy-lib.internal.tenantNamespaces" $root | fromYamlArray -}}
{{- range $l := slice $levels $from -}}
{{- $subjects = append $subjects (dict "kind" "Group" "apiGroup" "rbac.authorization.k8s.io" "name" (printf "%s-%s" $ns $l)) -}}
{{- end -}}
{{- end -}}
{{- toYaml $subjects -}}
{{- end -}}

{{/*
cozy-lib.internal.tenantNamespaces $: YAML list of the release's tenant
namespace and its ancestors, nearest first, ending with tenant-root.
*/}}
{{- define "cozy-lib.internal.tenantNamespaces" -}}
{{- $ns := .Release.Namespace -}}
{{- if not (regexMatch "^tenant-[a-z0-9]+(-[a-z0-9]+)*$" $ns) -}}
{{- fail (printf "cozy-lib: namespace %q is not a tenant namespace (tenant-root, tenant-<name>, <parent namespace>-<name>): tenant RBAC subjects exist only there" $ns) -}}
{{- end -}}
{{- $names := splitList "-" (trimPrefix "tenant-" $ns) -}}
{{- $out := list -}}
{{- range $i := untilStep (len $names) 0 -1 -}}
{{- $out = append $out (printf "tenant-%s" (slice $names 0 $i | join "-")) -}}
{{- end -}}
{{- if ne (first $names) "root" -}}
{{- $out = append $out "tenant-root" -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}
