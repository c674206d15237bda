{{/* capi-provider-talos.labels: the labels of every object of the release. */}}
{{- define "capi-provider-talos.labels" -}}
app.kubernetes.io/name: capi-provider-talos
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
