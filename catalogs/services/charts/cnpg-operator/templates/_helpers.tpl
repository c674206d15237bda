{{/* cnpg-operator.labels: the labels of every object of the release. */}}
{{- define "cnpg-operator.labels" -}}
app.kubernetes.io/name: cnpg-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* cnpg-operator.selector: the labels the Deployment selects its pods by. */}}
{{- define "cnpg-operator.selector" -}}
app.kubernetes.io/name: cnpg-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
