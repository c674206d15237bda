{{/* velero-backup-driver.labels: the labels of every object of the release. */}}
{{- define "velero-backup-driver.labels" -}}
app.kubernetes.io/name: velero-backup-driver
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
