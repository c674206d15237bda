{{- define "lib.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
{{- end }}
