{{- define "common.names.fullname" -}}
{{ .Release.Name }}-{{ .Chart.Name }}
{{- end }}
