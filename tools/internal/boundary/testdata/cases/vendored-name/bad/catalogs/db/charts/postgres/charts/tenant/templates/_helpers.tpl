{{- define "tenant.fullname" -}}
{{ .Release.Name }}-tenant
{{- end }}
