{{- define "vm-lib.disk" -}}
{{ .Release.Name }}-disk
{{- end }}
