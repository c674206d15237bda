{{/* kafka.labels: the labels of every object of the release. */}}
{{- define "kafka.labels" -}}
app.kubernetes.io/name: kafka
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
