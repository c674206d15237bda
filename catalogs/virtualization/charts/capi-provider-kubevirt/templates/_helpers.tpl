{{/* capi-provider-kubevirt.labels: the labels of every object of the release. */}}
{{- define "capi-provider-kubevirt.labels" -}}
app.kubernetes.io/name: capi-provider-kubevirt
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
