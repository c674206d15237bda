# The developer entry points. See README.md.
#
# Every real component (kube-apiserver, kube-controller-manager, kubectl, etcd,
# helm-controller, registry; the oras CLI for `make bench` only) is built from
# the Go modules pinned in sdk/localcp/versions.yaml into .cache/bin (ignored
# by git).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

MODULES := platform contracts sdk tools catalogs/services catalogs/virtualization
CACHE   ?= $(or $(COZYSTACK_CACHE_DIR),$(CURDIR)/.cache)
# Extra flags for `cozystack-local up`, e.g. UP_FLAGS=--ports=auto
UP_FLAGS ?=
STATE    := $(CACHE)/local
API_PORT ?= 17443
CONTROLLER_METRICS_PORT ?= 17080
CONTROLLER_HEALTH_PORT  ?= 17081
OPERATOR_ARTIFACT_PORT  ?= 17090
OPERATOR_METRICS_PORT   ?= 17180
OPERATOR_HEALTH_PORT    ?= 17181
LOCAL   := $(CACHE)/bin/cozystack-local
GOTEST_TIMEOUT ?= 45m

export COZYSTACK_CACHE_DIR := $(CACHE)

.PHONY: all build cli api demo up down status test unit bench bench-memory lint boundaries fmt generate cozy-lib vendor-cozy-lib crds sdk-compat sdk-baseline

all: build

# The CLI itself is cheap to build; it is rebuilt whenever its sources change.
cli:
	@mkdir -p $(CACHE)/bin
	@go build -o $(LOCAL) ./tools/cmd/cozystack-local

## build: build the pinned control-plane binaries (cold: ~20 min, then cached)
build: cli
	@$(LOCAL) build

# The platform's binaries: cozystack-api (the application API server),
# cozystack-controller (K2 projection, the backup core) and
# cozystack-operator (catalogs); and the catalogs' backup drivers.
api:
	@mkdir -p $(CACHE)/bin
	@go build -o $(CACHE)/bin/cozystack-api ./platform/cmd/cozystack-api
	@go build -o $(CACHE)/bin/cozystack-controller ./platform/cmd/cozystack-controller
	@go build -o $(CACHE)/bin/cozystack-operator ./platform/cmd/cozystack-operator
	@# The catalogs' backup drivers the main job runs (as their ServiceAccounts).
	@go build -o $(CACHE)/bin/cnpg-backup-driver ./catalogs/services/cmd/cnpg-backup-driver
	@go build -o $(CACHE)/bin/velero-backup-driver ./catalogs/virtualization/cmd/velero-backup-driver

## demo: the main job end to end on the local control plane
demo: build api
	@$(LOCAL) up $(UP_FLAGS)
	@# cozystack-api starts before the smoke check: once its APIService is
	@# registered (a previous demo), namespaces only finish deleting while
	@# it answers discovery.
	@$(LOCAL) cert --dns cozystack-api.cozy-system.svc,localhost --cert $(STATE)/cozystack-api.crt --key $(STATE)/cozystack-api.key >/dev/null
	@$(LOCAL) run cozystack-api --health https://127.0.0.1:$(API_PORT)/readyz -- $(CACHE)/bin/cozystack-api \
		--kubeconfig $(STATE)/kubeconfig --bind-address 127.0.0.1 --secure-port $(API_PORT) \
		--tls-cert-file $(STATE)/cozystack-api.crt --tls-private-key-file $(STATE)/cozystack-api.key \
		--install-crds --apiservice v1alpha1.apps.cozystack.io --restore-identity cozystack-admin \
		--register-local cozy-system/cozystack-api --register-ca-file $(STATE)/pki/ca.crt
	@$(LOCAL) run cozystack-controller --health http://127.0.0.1:$(CONTROLLER_HEALTH_PORT)/readyz --health-mode http -- $(CACHE)/bin/cozystack-controller \
		--kubeconfig $(STATE)/kubeconfig --install-crds \
		--metrics-bind-address 127.0.0.1:$(CONTROLLER_METRICS_PORT) --health-probe-bind-address 127.0.0.1:$(CONTROLLER_HEALTH_PORT)
	@# No pods run here: releases install without waiting for workloads.
	@$(LOCAL) run cozystack-operator --health http://127.0.0.1:$(OPERATOR_HEALTH_PORT)/readyz --health-mode http -- $(CACHE)/bin/cozystack-operator \
		--kubeconfig $(STATE)/kubeconfig --install-crds --disable-wait --properties network.stableVMAddress \
		--storage-dir $(STATE)/operator --artifact-bind-address 127.0.0.1:$(OPERATOR_ARTIFACT_PORT) \
		--metrics-bind-address 127.0.0.1:$(OPERATOR_METRICS_PORT) --health-probe-bind-address 127.0.0.1:$(OPERATOR_HEALTH_PORT)
	@$(LOCAL) smoke
	@$(LOCAL) main-job
	@$(LOCAL) status
	@echo
	@echo "The control plane keeps running; use it with:  eval \"\$$($(LOCAL) env)\"   stop it with:  make down"

up: build
	@$(LOCAL) up $(UP_FLAGS)

## down: stop every process of the local control plane
down: cli
	@$(LOCAL) down

status: cli
	@$(LOCAL) status

## test: unit and integration tests of every module (integration tests start
## their own control planes on free ports)
test: build
	@go test -count=1 -timeout $(GOTEST_TIMEOUT) $(addsuffix /...,$(addprefix ./,$(MODULES)))

## unit: the tests that need no control plane
unit:
	@go test -count=1 -short $(addsuffix /...,$(addprefix ./,$(MODULES)))

## bench: every benchmark of every module (also builds the optional oras CLI,
## the reference of the operator's catalog-pull benchmark)
bench: build
	@$(LOCAL) build oras
	@go test -run '^$$' -bench . -benchmem -timeout $(GOTEST_TIMEOUT) $(addsuffix /...,$(addprefix ./,$(MODULES)))

## bench-memory: the peak resident set (VmHWM) of the real cozystack-operator
## binary pulling a catalog artifact of 11 charts of 95 MiB (about 1 GiB), and
## again verifying it after a restart; fails over 100 MiB (`make test` runs
## the same test with 6 charts)
bench-memory: build
	@COZY_MEMORY_CHARTS=11 go test -count=1 -v -run '^TestOperatorPeakRSS$$' -timeout $(GOTEST_TIMEOUT) ./platform/internal/operator/memorytest/

## lint: go vet, a gofmt check, and the boundary linter (fails on a
## forbidden edge between modules; see boundaries.yaml)
lint:
	@go vet $(addsuffix /...,$(addprefix ./,$(MODULES)))
	@unformatted="$$(gofmt -l $(MODULES))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:"; echo "$$unformatted"; exit 1; fi
	@$(MAKE) --no-print-directory boundaries BOUNDARIES_FLAGS=--forbidden-only

BOUNDARIES       := $(CACHE)/bin/cozystack-boundaries
BOUNDARIES_FLAGS ?=

## boundaries: every edge between the modules, judged against boundaries.yaml
## (BOUNDARIES_FLAGS="-o json" for JSON)
boundaries:
	@mkdir -p $(CACHE)/bin
	@go build -o $(BOUNDARIES) ./tools/cmd/cozystack-boundaries
	@$(BOUNDARIES) --root $(CURDIR) $(BOUNDARIES_FLAGS)

fmt:
	@gofmt -w $(MODULES)

## generate: regenerate the deepcopy code and the CRDs of contracts/apis
## (contracts/crds); a test in contracts/crds fails when they are stale
generate:
	@cd contracts && go tool controller-gen object paths=./apis/... crd paths=./apis/... output:crd:artifacts:config=crds

COZY_LIB_VERSION := $(shell sed -n 's/^version: //p' platform/charts/cozy-lib/Chart.yaml)
COZY_LIB_TGZ     := $(CACHE)/charts/cozy-lib-$(COZY_LIB_VERSION).tgz

## cozy-lib: package the K5 library chart platform/charts/cozy-lib reproducibly
## into .cache/charts (same sources, same bytes)
cozy-lib:
	@go run ./tools/cmd/cozypkg package platform/charts/cozy-lib -d $(CACHE)/charts

## vendor-cozy-lib: vendor the packaged cozy-lib into every catalog chart that
## depends on it (charts/cozy-lib-<version>.tgz and Chart.lock, as `helm
## dependency build` leaves them); a test in tools/ fails when they are stale
vendor-cozy-lib: cozy-lib
	@go run ./tools/cmd/cozypkg vendor-lib $(COZY_LIB_TGZ) catalogs

## crds: write the operator CRDs of each catalog from the sources pinned in its
## crds.yaml: Go modules (files, or controller-gen over their API types), and
## with MIRROR=DIR a mirror directory
crds:
	@cd catalogs/services && go run ./cmd/sync-crds $(if $(MIRROR),--mirror $(abspath $(MIRROR)))
	@cd catalogs/virtualization && go run ./cmd/sync-crds $(if $(MIRROR),--mirror $(abspath $(MIRROR)))

SDKCOMPAT := $(CACHE)/bin/cozystack-sdkcompat

## sdk-compat: the SDK module (sdk/, cozystack.io/sdk) against the baseline of
## its previous release: its Go API (apidiff, pinned in tools/go.mod) and its
## CRDs of backups.cozystack.io; then the canary proves the check fails on a
## scratch copy without one exported function or with one CRD field renamed
sdk-compat:
	@mkdir -p $(CACHE)/bin
	@go build -o $(SDKCOMPAT) ./tools/cmd/cozystack-sdkcompat
	@$(SDKCOMPAT) --root $(CURDIR) check
	@$(SDKCOMPAT) --root $(CURDIR) canary

## sdk-baseline: cut the baseline of the version in sdk/VERSION into
## sdk/compat/v<version>/ (export data of every package, copies of the CRDs)
sdk-baseline:
	@mkdir -p $(CACHE)/bin
	@go build -o $(SDKCOMPAT) ./tools/cmd/cozystack-sdkcompat
	@$(SDKCOMPAT) --root $(CURDIR) baseline
