{{- define "cnpg-backup-driver.selector" -}}
app.kubernetes.io/name: cnpg-backup-driver
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "cnpg-backup-driver.labels" -}}
{{ include "cnpg-backup-driver.selector" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}
