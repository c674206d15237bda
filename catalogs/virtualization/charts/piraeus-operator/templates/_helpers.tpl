{{/* piraeus-operator.labels: the labels of every object of the release. */}}
{{- define "piraeus-operator.labels" -}}
app.kubernetes.io/name: piraeus-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
