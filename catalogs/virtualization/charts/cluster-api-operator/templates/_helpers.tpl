{{/* cluster-api-operator.labels: the labels of every object of the release. */}}
{{- define "cluster-api-operator.labels" -}}
app.kubernetes.io/name: cluster-api-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
