{{/* clickhouse.labels: the labels of every object of the release. */}}
{{- define "clickhouse.labels" -}}
app.kubernetes.io/name: clickhouse
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* clickhouse.selector: the labels the Services select the server by. */}}
{{- define "clickhouse.selector" -}}
app.kubernetes.io/name: clickhouse
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
clickhouse.password (list KEY GIVEN $): GIVEN when set, else the value
stored under KEY in the release's credentials Secret (so upgrades keep it),
else a new random password.
*/}}
{{- define "clickhouse.password" -}}
{{- $root := index . 2 -}}
{{- $existing := lookup "v1" "Secret" $root.Release.Namespace (printf "%s-credentials" $root.Release.Name) -}}
{{- if index . 1 -}}
{{- index . 1 -}}
{{- else if and $existing (hasKey ($existing.data | default dict) (index . 0)) -}}
{{- index $existing.data (index . 0) | b64dec -}}
{{- else -}}
{{- randAlphaNum 32 -}}
{{- end -}}
{{- end -}}

{{/*
clickhouse.usersXML (list PASSWORDS $): the users.d file declaring each user
of the map PASSWORDS (name to password) with its password's SHA-256 and its
profile (readonly when users.<name>.readonly). Names are the schema's
(^[a-z][a-z0-9_]{0,30}$), so they are valid XML element names.
*/}}
{{- define "clickhouse.usersXML" -}}
{{- $root := index . 1 -}}
<clickhouse>
  <users>
    {{- range $name, $password := index . 0 }}
    <{{ $name }} replace="replace">
      <password_sha256_hex>{{ sha256sum $password }}</password_sha256_hex>
      <networks><ip>::/0</ip></networks>
      <profile>{{ if (index ($root.Values.users | default dict) $name | default dict).readonly }}readonly{{ else }}default{{ end }}</profile>
      <quota>default</quota>
      {{- if eq $name "default" }}
      <access_management>1</access_management>
      {{- end }}
    </{{ $name }}>
    {{- end }}
  </users>
</clickhouse>
{{- end -}}
