{{/* kubevirt-operator.labels: the labels of every object of the release. */}}
{{- define "kubevirt-operator.labels" -}}
app.kubernetes.io/name: kubevirt-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
