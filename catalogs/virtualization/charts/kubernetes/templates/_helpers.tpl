{{/* kubernetes.labels: the labels of every object of the release. */}}
{{- define "kubernetes.labels" -}}
app.kubernetes.io/name: kubernetes
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/*
kubernetes.version: the patch release of .Values.version. The versions are
those Kamaji v1.0.0 (the kamaji-operator package) runs.
*/}}
{{- define "kubernetes.version" -}}
{{- $versions := dict "v1.30" "v1.30.14" "v1.29" "v1.29.15" -}}
{{- index $versions .Values.version -}}
{{- end -}}

{{/* kubernetes.workerImage: the workers' container disk, for the version. */}}
{{- define "kubernetes.workerImage" -}}
{{- include "cozy-lib.image" (list (printf "quay.io/capk/ubuntu-2204-container-disk:%s" (include "kubernetes.version" .)) .) -}}
{{- end -}}

{{/* kubernetes.host: the API server's host name. */}}
{{- define "kubernetes.host" -}}
{{- .Values.host | default (printf "%s.%s" .Release.Name (include "cozy-lib.namespace.required" (list "host" .))) -}}
{{- end -}}

{{/*
kubernetes.endpoint: the in-cluster name of the API server's Service, which
Kamaji names after the TenantControlPlane.
*/}}
{{- define "kubernetes.endpoint" -}}
{{- printf "%s.%s.svc.%s" .Release.Name .Release.Namespace (include "cozy-lib.cluster.required" (list "cluster-domain" .)) -}}
{{- end -}}

{{/*
kubernetes.nodeGroups: the node groups with every field defaulted, as YAML;
one group md0 when none is given.
*/}}
{{- define "kubernetes.nodeGroups" -}}
{{- $groups := .Values.nodeGroups | default (dict "md0" dict) -}}
{{- $out := dict -}}
{{- range $name, $g := $groups -}}
{{- $min := $g.minReplicas | default 0 -}}
{{- if not (hasKey $g "minReplicas") -}}{{- $min = 1 -}}{{- end -}}
{{- $max := $g.maxReplicas | default 10 -}}
{{- if lt (int $max) (int $min) -}}
{{- fail (printf "kubernetes: nodeGroups.%s: maxReplicas %v is below minReplicas %v" $name $max $min) -}}
{{- end -}}
{{- $_ := set $out $name (dict "minReplicas" $min "maxReplicas" $max "instanceType" ($g.instanceType | default "u1.medium") "diskSize" ($g.diskSize | default "20Gi") "roles" ($g.roles | default list)) -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}
