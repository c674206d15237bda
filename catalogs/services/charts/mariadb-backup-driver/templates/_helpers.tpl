{{/* mariadb-backup-driver.selector: the Deployment's pod selector. */}}
{{- define "mariadb-backup-driver.selector" -}}
app.kubernetes.io/name: mariadb-backup-driver
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* mariadb-backup-driver.labels: the labels of every object of the release. */}}
{{- define "mariadb-backup-driver.labels" -}}
{{ include "mariadb-backup-driver.selector" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}
