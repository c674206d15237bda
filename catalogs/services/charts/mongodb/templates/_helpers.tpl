{{/* mongodb.labels: the labels of every object of the release. */}}
{{- define "mongodb.labels" -}}
app.kubernetes.io/name: mongodb
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/*
mongodb.password (list KEY GIVEN $): GIVEN when set, else the value stored
under KEY in the release's credentials Secret (so upgrades keep it), else a
new random password.
*/}}
{{- define "mongodb.password" -}}
{{- $root := index . 2 -}}
{{- $existing := lookup "v1" "Secret" $root.Release.Namespace (printf "%s-credentials" $root.Release.Name) -}}
{{- if index . 1 -}}
{{- index . 1 -}}
{{- else if and $existing (hasKey ($existing.data | default dict) (index . 0)) -}}
{{- index $existing.data (index . 0) | b64dec -}}
{{- else -}}
{{- randAlphaNum 32 -}}
{{- end -}}
{{- end -}}
