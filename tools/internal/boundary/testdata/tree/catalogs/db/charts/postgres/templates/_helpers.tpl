{{- define "postgres.name" -}}
{{ include "common.names.fullname" . }}
{{- end }}
