{{/* psmdb-operator.labels: the labels of every object of the release. */}}
{{- define "psmdb-operator.labels" -}}
app.kubernetes.io/name: psmdb-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* psmdb-operator.selector: the labels the Deployment selects its pods by. */}}
{{- define "psmdb-operator.selector" -}}
app.kubernetes.io/name: psmdb-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
