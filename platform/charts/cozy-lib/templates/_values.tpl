{{/*
Readers of the cluster values (contract K2). cozystack-controller projects
them into every tenant namespace (ConfigMap cozystack-values, key
values.yaml) and each HelmRelease reads them with a valuesFrom entry, so a
chart sees .Values._cluster and .Values._namespace.

Every reader takes (list KEY $) and returns the key's value as a string. A
key that is not part of K2 fails the render (a chart must not read a key
nothing writes); so does a required read of a key that is missing or
empty, with a message naming the key and who provides it.
*/}}

{{/*
cozy-lib.cluster.required (list KEY $): the value of _cluster.KEY; fails
the render when it is missing or empty.
*/}}
{{- define "cozy-lib.cluster.required" -}}
{{- include "cozy-lib.internal.read" (list "_cluster" (index . 0) true (index . 1)) -}}
{{- end -}}

{{/*
cozy-lib.cluster.optional (list KEY $): the value of _cluster.KEY, or ""
when it is absent.
*/}}
{{- define "cozy-lib.cluster.optional" -}}
{{- include "cozy-lib.internal.read" (list "_cluster" (index . 0) false (index . 1)) -}}
{{- end -}}

{{/*
cozy-lib.namespace.required (list KEY $): the value of _namespace.KEY;
fails the render when it is missing or empty.
*/}}
{{- define "cozy-lib.namespace.required" -}}
{{- include "cozy-lib.internal.read" (list "_namespace" (index . 0) true (index . 1)) -}}
{{- end -}}

{{/*
cozy-lib.namespace.optional (list KEY $): the value of _namespace.KEY, or
"" when it is absent.
*/}}
{{- define "cozy-lib.namespace.optional" -}}
{{- include "cozy-lib.internal.read" (list "_namespace" (index . 0) false (index . 1)) -}}
{{- end -}}

{{/*
cozy-lib.internal.read (list OBJECT KEY REQUIRED $): the reader behind the
four above. The object itself (_cluster or _namespace) must always be
present: its absence means the release was rendered without cluster values,
which must never happen silently, even for an optional key.
*/}}
{{- define "cozy-lib.internal.read" -}}
{{- $object := index . 0 -}}
{{- $key := index . 1 -}}
{{- $required := index . 2 -}}
{{- $root := index . 3 -}}
{{- $providers := index (include "cozy-lib.internal.providers" $root | fromYaml) $object -}}
{{- if not (kindIs "string" $key) -}}
{{- fail (printf "cozy-lib: the key of a %s reader must be a string, got %v" $object $key) -}}
{{- end -}}
{{- if not (hasKey $providers $key) -}}
{{- fail (printf "cozy-lib: %s.%s is not a key of the cluster values (contract K2, contracts/schemas/v1alpha1/k2-cluster-values.md): fix the key's name" $object $key) -}}
{{- end -}}
{{- $values := index $root.Values $object -}}
{{- if not (kindIs "map" $values) -}}
{{- fail (printf "cozy-lib: .Values.%s is missing: the release was rendered without the cluster values; its HelmRelease must read them with valuesFrom (ConfigMap cozystack-values, key values.yaml), which cozystack-controller writes into every tenant namespace (contract K2)" $object) -}}
{{- end -}}
{{- $value := index $values $key -}}
{{- if and $required (or (kindIs "invalid" $value) (eq (toString $value) "")) -}}
{{- $provider := index $providers $key -}}
{{- if eq $object "_cluster" -}}
{{- $provider = printf "the field %s of the ClusterValues object \"cluster\" (cozystack.io/v1alpha1), projected by cozystack-controller" $provider -}}
{{- end -}}
{{- fail (printf "cozy-lib: required value %s.%s is missing or empty; it is provided by %s (contract K2)" $object $key $provider) -}}
{{- end -}}
{{- if not (kindIs "invalid" $value) -}}
{{- toString $value -}}
{{- end -}}
{{- end -}}

{{/*
cozy-lib.internal.providers: YAML mapping every scalar K2 key to who
provides it: for _cluster the field of ClusterValues, for _namespace the
label of the tenant Namespace. Its keys are exactly those of
contracts/schemas/v1alpha1/k2-cluster-values.schema.json (a test checks).
*/}}
{{- define "cozy-lib.internal.providers" -}}
_cluster:
  root-host: .spec.rootHost
  api-server-endpoint: .spec.apiServerEndpoint
  cluster-domain: .spec.networking.clusterDomain
  ipv4-cluster-cidr: .spec.networking.podCIDR
  ipv4-service-cidr: .spec.networking.serviceCIDR
  ipv4-join-cidr: .spec.networking.joinCIDR
  expose-services: .spec.publishing.exposedServices
  expose-ingress: .spec.publishing.ingressName
  expose-external-ips: .spec.publishing.externalIPs
  load-balancer-class: .spec.publishing.loadBalancerClass
  issuer-name: .spec.certificates.issuerName
  clusterissuer: .spec.certificates.solver
  oidc-enabled: .spec.oidc.enabled
  oidc-issuer-url: .spec.oidc.issuerURL
  oidc-client-id: .spec.oidc.clientID
  oidc-realm-name: .spec.oidc.realmName
  extra-keycloak-redirect-uri-for-dashboard: .spec.oidc.dashboardExtraRedirectURI
  gateway-api: .spec.gateway.enabled
  gateway-class-name: .spec.gateway.className
  cpu-allocation-ratio: .spec.resources.cpuAllocationRatio
  memory-allocation-ratio: .spec.resources.memoryAllocationRatio
  ephemeral-storage-allocation-ratio: .spec.resources.ephemeralStorageAllocationRatio
  images-registry: .spec.images.registry
  tenant-pod-security: .spec.podSecurity.tenantLevel
_namespace:
  host: the tenant Namespace's label (or annotation) namespace.cozystack.io/host, set by the tenant chart
  ingress: the tenant Namespace's label (or annotation) namespace.cozystack.io/ingress, set by the tenant chart when a tenant up the tree enables ingress
  monitoring: the tenant Namespace's label (or annotation) namespace.cozystack.io/monitoring, set by the tenant chart when a tenant up the tree enables monitoring
  etcd: the tenant Namespace's label (or annotation) namespace.cozystack.io/etcd, set by the tenant chart when a tenant up the tree enables etcd
  seaweedfs: the tenant Namespace's label (or annotation) namespace.cozystack.io/seaweedfs, set by the tenant chart when a tenant up the tree enables seaweedfs
  gateway: the tenant Namespace's label (or annotation) namespace.cozystack.io/gateway, set by the tenant chart when a tenant up the tree enables a gateway
  schedulingClass: the tenant Namespace's label (or annotation) namespace.cozystack.io/scheduling-class, set by the tenant chart
{{- end -}}
