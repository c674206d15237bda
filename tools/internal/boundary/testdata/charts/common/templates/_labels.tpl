{{- define "common.labels" -}}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}
