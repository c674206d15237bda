{{/*
cozy-lib.image (list REFERENCE $): the image reference to use for
REFERENCE (e.g. "ghcr.io/cloudnative-pg/postgresql:17.5" or "redis:8"):
REFERENCE itself, or, when the cluster names a mirror in
_cluster.images-registry (optional), the same repository path and tag or
digest under that registry ("registry.example.org/cozystack" gives
"registry.example.org/cozystack/cloudnative-pg/postgresql:17.5"; Docker
Hub images keep their "library/" path). Reads _cluster.images-registry.
*/}}
{{- define "cozy-lib.image" -}}
{{- $ref := index . 0 -}}
{{- if not (and (kindIs "string" $ref) (regexMatch "^[a-z0-9][^\\s@]*(@sha256:[a-f0-9]{64})?$" $ref)) -}}
{{- fail (printf "cozy-lib: image reference %v: want repository[:tag][@sha256:digest], e.g. ghcr.io/org/app:1.0" $ref) -}}
{{- end -}}
{{- $mirror := include "cozy-lib.cluster.optional" (list "images-registry" (index . 1)) -}}
{{- if $mirror -}}
{{- $parts := splitList "/" $ref -}}
{{- $first := first $parts -}}
{{- $path := $ref -}}
{{- if and (gt (len $parts) 1) (or (contains "." $first) (contains ":" $first) (eq $first "localhost")) -}}
{{- $path = rest $parts | join "/" -}}
{{- else if eq (len $parts) 1 -}}
{{- $path = printf "library/%s" $ref -}}
{{- end -}}
{{- printf "%s/%s" (trimSuffix "/" $mirror) $path -}}
{{- else -}}
{{- $ref -}}
{{- end -}}
{{- end -}}
