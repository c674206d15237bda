{{/* vpc.labels: the labels of every object of the release. */}}
{{- define "vpc.labels" -}}
app.kubernetes.io/name: vpc
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/*
vpc.memberKey NAME: the label key that makes a pod (a VM's virt-launcher)
a member of the VPC whose release is NAME; its value is the subnet. The
vm-instance chart sets it from its networks.
*/}}
{{- define "vpc.memberKey" -}}
vpc.cozystack.io/{{ . }}
{{- end -}}
