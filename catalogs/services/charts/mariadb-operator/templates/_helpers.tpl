{{/* mariadb-operator.labels: the labels of every object of the release. */}}
{{- define "mariadb-operator.labels" -}}
app.kubernetes.io/name: mariadb-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* mariadb-operator.selector: the labels the Deployment selects its pods by. */}}
{{- define "mariadb-operator.selector" -}}
app.kubernetes.io/name: mariadb-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
