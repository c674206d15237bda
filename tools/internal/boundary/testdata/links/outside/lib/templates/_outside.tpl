{{- define "outside.name" -}}outside{{- end }}
