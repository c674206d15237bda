{{/* Shared by the catalog's charts through symbolic links. */}}
{{- define "postgres.shared" -}}shared{{- end }}
