{{/* kamaji-operator.labels: the labels of every object of the release. */}}
{{- define "kamaji-operator.labels" -}}
app.kubernetes.io/name: kamaji-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
