{{/* postgres.labels: the labels of every object of the release. */}}
{{- define "postgres.labels" -}}
app.kubernetes.io/name: postgres
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* postgres.image: the PostgreSQL image of .Values.version. */}}
{{- define "postgres.image" -}}
{{- $tags := dict "v17" "17.6" "v16" "16.10" "v15" "15.14" -}}
{{- include "cozy-lib.image" (list (printf "ghcr.io/cloudnative-pg/postgresql:%s" (index $tags .Values.version)) $) -}}
{{- end -}}

{{/*
postgres.password (list SECRET KEY GIVEN $): GIVEN when set, else the value
already stored under KEY in the Secret SECRET (so upgrades keep it), else a
new random password.
*/}}
{{- define "postgres.password" -}}
{{- $given := index . 2 -}}
{{- $root := index . 3 -}}
{{- $existing := lookup "v1" "Secret" $root.Release.Namespace (index . 0) -}}
{{- if $given -}}
{{- $given -}}
{{- else if and $existing (hasKey ($existing.data | default dict) (index . 1)) -}}
{{- index $existing.data (index . 1) | b64dec -}}
{{- else -}}
{{- randAlphaNum 32 -}}
{{- end -}}
{{- end -}}
