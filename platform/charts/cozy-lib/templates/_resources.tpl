{{/*
Resources and sizing presets. A chart names a preset (nano … 2xlarge) or
gives explicit limits; the library derives the requests from the limits
with the cluster's allocation ratios (contract K2):

  request = limit / _cluster.<resource>-allocation-ratio

never more than the limit (a ratio below 1 would ask for more than the
container may use). CPU requests are rounded down to whole millicores,
memory and ephemeral-storage requests to whole Ki; none is below 1m or 1Ki.
*/}}

{{/*
cozy-lib.resources.preset (list PRESET $): a container's resources (YAML
with limits and requests of cpu, memory and ephemeral-storage) for the
preset PRESET: nano, micro, small, medium, large, xlarge or 2xlarge.
Reads _cluster.cpu-allocation-ratio, _cluster.memory-allocation-ratio and
_cluster.ephemeral-storage-allocation-ratio.
*/}}
{{- define "cozy-lib.resources.preset" -}}
{{- include "cozy-lib.internal.resources" (list (include "cozy-lib.internal.presetLimits" (index . 0) | fromYaml) (index . 1)) -}}
{{- end -}}

{{/*
cozy-lib.resources.defaulting (list RESOURCES PRESET $): like
cozy-lib.resources.preset, with the limits of RESOURCES (a map with any of
cpu, memory, ephemeral-storage; empty values ignored) taking the place of
the preset's. Charts pass .Values.resources and .Values.resourcesPreset.
*/}}
{{- define "cozy-lib.resources.defaulting" -}}
{{- $explicit := index . 0 | default dict -}}
{{- $limits := include "cozy-lib.internal.presetLimits" (index . 1) | fromYaml -}}
{{- if not (kindIs "map" $explicit) -}}
{{- fail (printf "cozy-lib: resources must be a map of cpu, memory and ephemeral-storage, got %v" $explicit) -}}
{{- end -}}
{{- range $name, $value := $explicit -}}
{{- if not (has $name (list "cpu" "memory" "ephemeral-storage")) -}}
{{- fail (printf "cozy-lib: resources.%s: want cpu, memory or ephemeral-storage" $name) -}}
{{- end -}}
{{- if not (eq (toString ($value | default "")) "") -}}
{{- $_ := set $limits $name (toString $value) -}}
{{- end -}}
{{- end -}}
{{- include "cozy-lib.internal.resources" (list $limits (index . 2)) -}}
{{- end -}}

{{/* cozy-lib.internal.presetTable: the limits of each preset. */}}
{{- define "cozy-lib.internal.presetTable" -}}
nano: {cpu: 250m, memory: 128Mi, ephemeral-storage: 2Gi}
micro: {cpu: 500m, memory: 256Mi, ephemeral-storage: 2Gi}
small: {cpu: "1", memory: 512Mi, ephemeral-storage: 2Gi}
medium: {cpu: "1", memory: 1Gi, ephemeral-storage: 2Gi}
large: {cpu: "2", memory: 2Gi, ephemeral-storage: 2Gi}
xlarge: {cpu: "4", memory: 4Gi, ephemeral-storage: 2Gi}
2xlarge: {cpu: "8", memory: 8Gi, ephemeral-storage: 2Gi}
{{- end -}}

{{/* cozy-lib.internal.presetLimits PRESET: the preset's limits, or a failed render. */}}
{{- define "cozy-lib.internal.presetLimits" -}}
{{- $table := include "cozy-lib.internal.presetTable" . | fromYaml -}}
{{- if not (hasKey $table (toString .)) -}}
{{- fail (printf "cozy-lib: unknown resources preset %q: want one of nano, micro, small, medium, large, xlarge, 2xlarge" (toString .)) -}}
{{- end -}}
{{- index $table (toString .) | toYaml -}}
{{- end -}}

{{/*
cozy-lib.internal.resources (list LIMITS $): limits and requests for the
map LIMITS (cpu, memory, ephemeral-storage), requests from the ratios.
*/}}
{{- define "cozy-lib.internal.resources" -}}
{{- $limits := index . 0 -}}
{{- $root := index . 1 -}}
{{- $cpuRatio := include "cozy-lib.internal.ratio" (list "cpu-allocation-ratio" $root) | float64 -}}
{{- $memRatio := include "cozy-lib.internal.ratio" (list "memory-allocation-ratio" $root) | float64 -}}
{{- $ephRatio := include "cozy-lib.internal.ratio" (list "ephemeral-storage-allocation-ratio" $root) | float64 -}}
{{- $cpu := include "cozy-lib.internal.milliCPU" $limits.cpu | int64 -}}
{{- $mem := include "cozy-lib.internal.bytes" (list "memory" $limits.memory) | int64 -}}
{{- $eph := include "cozy-lib.internal.bytes" (list "ephemeral-storage" (index $limits "ephemeral-storage")) | int64 -}}
{{- $cpuReq := min $cpu (max 1 (floor (divf $cpu $cpuRatio) | int64)) -}}
{{- $memReq := min $mem (max 1024 (mul 1024 (floor (divf $mem (mulf 1024 $memRatio)) | int64))) -}}
{{- $ephReq := min $eph (max 1024 (mul 1024 (floor (divf $eph (mulf 1024 $ephRatio)) | int64))) -}}
limits:
  cpu: {{ include "cozy-lib.internal.formatCPU" $cpu | quote }}
  ephemeral-storage: {{ include "cozy-lib.internal.formatBytes" $eph | quote }}
  memory: {{ include "cozy-lib.internal.formatBytes" $mem | quote }}
requests:
  cpu: {{ include "cozy-lib.internal.formatCPU" $cpuReq | quote }}
  ephemeral-storage: {{ include "cozy-lib.internal.formatBytes" $ephReq | quote }}
  memory: {{ include "cozy-lib.internal.formatBytes" $memReq | quote }}
{{- end -}}

{{/* cozy-lib.internal.ratio (list KEY $): a required allocation ratio, checked to be a positive decimal. */}}
{{- define "cozy-lib.internal.ratio" -}}
{{- $key := index . 0 -}}
{{- $value := include "cozy-lib.cluster.required" . -}}
{{- if not (regexMatch "^(0\\.[0-9]*[1-9][0-9]*|[1-9][0-9]*(\\.[0-9]+)?)$" $value) -}}
{{- fail (printf "cozy-lib: _cluster.%s is %q: want a positive decimal such as 10 or 1.5 (ClusterValues .spec.resources)" $key $value) -}}
{{- end -}}
{{- $value -}}
{{- end -}}

{{/* cozy-lib.internal.milliCPU QUANTITY: a CPU quantity (2, "0.5", "250m") in millicores. */}}
{{- define "cozy-lib.internal.milliCPU" -}}
{{- $q := toString . -}}
{{- if not (regexMatch "^[0-9]+(\\.[0-9]+)?m?$" $q) -}}
{{- fail (printf "cozy-lib: cpu %q: want cores (1, 0.5) or millicores (250m)" $q) -}}
{{- end -}}
{{- if hasSuffix "m" $q -}}
{{- trimSuffix "m" $q | float64 | floor | int64 -}}
{{- else -}}
{{- round (mulf ($q | float64) 1000) 0 | int64 -}}
{{- end -}}
{{- end -}}

{{/* cozy-lib.internal.bytes (list NAME QUANTITY): a memory or storage quantity (512Mi, 1G, 1.5Gi) in bytes. */}}
{{- define "cozy-lib.internal.bytes" -}}
{{- $name := index . 0 -}}
{{- $q := toString (index . 1) -}}
{{- $units := dict "" 1 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 -}}
{{- $unit := regexFind "[A-Za-z]*$" $q -}}
{{- $number := trimSuffix $unit $q -}}
{{- if or (not (regexMatch "^[0-9]+(\\.[0-9]+)?$" $number)) (not (hasKey $units $unit)) -}}
{{- fail (printf "cozy-lib: %s %q: want a quantity such as 512Mi, 2Gi or 1G" $name $q) -}}
{{- end -}}
{{- round (mulf ($number | float64) (index $units $unit)) 0 | int64 -}}
{{- end -}}

{{/* cozy-lib.internal.formatCPU MILLICORES: "2" for whole cores, else "250m". */}}
{{- define "cozy-lib.internal.formatCPU" -}}
{{- $m := . | int64 -}}
{{- if eq (mod $m 1000) 0 -}}{{ div $m 1000 }}{{- else -}}{{ $m }}m{{- end -}}
{{- end -}}

{{/* cozy-lib.internal.formatBytes BYTES: the largest binary unit (Gi, Mi, Ki) that divides BYTES exactly. */}}
{{- define "cozy-lib.internal.formatBytes" -}}
{{- $b := . | int64 -}}
{{- if and (gt $b 0) (eq (mod $b 1073741824) 0) -}}{{ div $b 1073741824 }}Gi
{{- else if and (gt $b 0) (eq (mod $b 1048576) 0) -}}{{ div $b 1048576 }}Mi
{{- else if and (gt $b 0) (eq (mod $b 1024) 0) -}}{{ div $b 1024 }}Ki
{{- else -}}{{ $b }}
{{- end -}}
{{- end -}}
