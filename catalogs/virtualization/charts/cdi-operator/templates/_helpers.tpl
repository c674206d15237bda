{{/* cdi-operator.labels: the labels of every object of the release. */}}
{{- define "cdi-operator.labels" -}}
app.kubernetes.io/name: cdi-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
