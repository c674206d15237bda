{{/* strimzi-operator.labels: the labels of every object of the release. */}}
{{- define "strimzi-operator.labels" -}}
app.kubernetes.io/name: strimzi-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* strimzi-operator.selector: the labels the Deployment selects its pods by. */}}
{{- define "strimzi-operator.selector" -}}
app.kubernetes.io/name: strimzi-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
