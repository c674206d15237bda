{{/* redis-operator.labels: the labels of every object of the release. */}}
{{- define "redis-operator.labels" -}}
app.kubernetes.io/name: redis-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* redis-operator.selector: the labels the Deployment selects its pods by. */}}
{{- define "redis-operator.selector" -}}
app.kubernetes.io/name: redis-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
