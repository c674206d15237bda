{{/* vm-disk.labels: the labels of every object of the release. */}}
{{- define "vm-disk.labels" -}}
app.kubernetes.io/name: vm-disk
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
