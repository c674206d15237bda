{{- define "db.host" -}}
{{ .Release.Name }}-db.{{ .Release.Namespace }}.svc
{{- end }}
