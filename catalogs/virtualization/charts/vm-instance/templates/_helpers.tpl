{{/* vm-instance.labels: the labels of every object of the release. */}}
{{- define "vm-instance.labels" -}}
app.kubernetes.io/name: vm-instance
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/*
vm-instance.optical NAME: "true" when the VMDisk NAME (the DataVolume
vm-disk-NAME) is marked optical by the vm-disk chart. Without a cluster
(helm template) nothing is found, and the disk is a plain disk.
*/}}
{{- define "vm-instance.optical" -}}
{{- $dv := lookup "cdi.kubevirt.io/v1beta1" "DataVolume" .root.Release.Namespace (printf "vm-disk-%s" .name) -}}
{{- dig "metadata" "annotations" "vm-disk.cozystack.io/optical" "" ($dv | default dict) -}}
{{- end -}}

{{/* vm-instance.userData: the cloud-init user data. */}}
{{- define "vm-instance.userData" -}}
{{- if .Values.cloudInit -}}
{{- .Values.cloudInit -}}
{{- else -}}
#cloud-config
hostname: {{ .Release.Name }}
{{- with .Values.sshKeys }}
ssh_authorized_keys:
  {{- range . }}
  - {{ . | quote }}
  {{- end }}
{{- end }}
{{- end -}}
{{- end -}}
