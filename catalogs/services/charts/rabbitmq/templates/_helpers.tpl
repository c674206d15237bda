{{/* rabbitmq.labels: the labels of every object of the release. */}}
{{- define "rabbitmq.labels" -}}
app.kubernetes.io/name: rabbitmq
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* rabbitmq.selector: the labels the Services select the nodes by. */}}
{{- define "rabbitmq.selector" -}}
app.kubernetes.io/name: rabbitmq
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
rabbitmq.secret (list KEY $): the value stored under KEY in the release's
credentials Secret (so upgrades keep it), else a new random one.
*/}}
{{- define "rabbitmq.secret" -}}
{{- $root := index . 1 -}}
{{- $existing := lookup "v1" "Secret" $root.Release.Namespace (printf "%s-credentials" $root.Release.Name) -}}
{{- if and $existing (hasKey ($existing.data | default dict) (index . 0)) -}}
{{- index $existing.data (index . 0) | b64dec -}}
{{- else -}}
{{- randAlphaNum 32 -}}
{{- end -}}
{{- end -}}
