# video-operator Makefile, in the kubebuilder convention. Tools are pinned and installed into ./bin.

# KUBE_VERSION, ETCD_VERSION and SETUP_ENVTEST_VERSION: the one place naming the Kubernetes version.
include hack/envtest/versions.env

# Version stamped into the manager binary and image; `make release VERSION=x.y.z` sets it.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# The registry and repository released images are published to (docs/release.md).
IMAGE_REPO ?= ghcr.io/videoops/video-operator
# Image URL to use all building/pushing image targets.
IMG ?= $(IMAGE_REPO):$(VERSION)

LOCALBIN ?= $(shell pwd)/bin
$(LOCALBIN):
	mkdir -p $(LOCALBIN)

## Tool versions
CONTROLLER_TOOLS_VERSION ?= v0.23.0
# v5.8.3 needs Go 1.27; v5.8.2 is the newest that builds with Go 1.26.
KUSTOMIZE_VERSION ?= v5.8.2
GOLANGCI_LINT_VERSION ?= v2.15.0
# kube-api-linter has no release tags: a pseudo-version of its golangci-lint build (TOOLCHAIN.md).
KUBE_API_LINTER_VERSION ?= v0.0.0-20260716143926-092fe0c72997
# Helm v3.22.0 builds with Go 1.26 from the module proxy (~80 s cold on 2 cores).
HELM_VERSION ?= v3.22.0
# crd-ref-docs writes docs/api-reference.md from the Go types (its built-in markdown templates).
CRD_REF_DOCS_VERSION ?= v0.3.0
# helm-docs writes dist/chart/README.md from the values' comments.
HELM_DOCS_VERSION ?= v1.14.2
# cyclonedx-gomod writes the manager's SBOM (CycloneDX) in make release.
CYCLONEDX_GOMOD_VERSION ?= v1.10.0

## Tool binaries, versioned in their names so that a version bump installs afresh
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
KUSTOMIZE ?= $(LOCALBIN)/kustomize-$(KUSTOMIZE_VERSION)
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
KUBE_API_LINTER ?= $(LOCALBIN)/golangci-lint-kube-api-linter-$(KUBE_API_LINTER_VERSION)
HELM ?= $(LOCALBIN)/helm-$(HELM_VERSION)
CRD_REF_DOCS ?= $(LOCALBIN)/crd-ref-docs-$(CRD_REF_DOCS_VERSION)
HELM_DOCS ?= $(LOCALBIN)/helm-docs-$(HELM_DOCS_VERSION)
CYCLONEDX_GOMOD ?= $(LOCALBIN)/cyclonedx-gomod-$(CYCLONEDX_GOMOD_VERSION)

# Setting SHELL to bash allows bash commands to be executed by recipes.
SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } /^[A-Z_]+ \?=.*##/ { split($$0, v, " "); printf "  \033[33m%-18s\033[0m %s\n", v[1], substr($$0, index($$0, "##") + 3) } ' $(MAKEFILE_LIST)

##@ Getting started

.PHONY: demo
demo: ## Run the operator locally against the service simulator and show a few videos being made (DEMO_ARGS="--help").
	@hack/demo.sh $(DEMO_ARGS)

##@ Development

.PHONY: manifests
manifests: controller-gen api-docs ## Generate CRDs (installed, and the complete request schema the controller checks) and RBAC from the markers, copy them into the Helm chart, and write the API reference.
	rm -rf $(LOCALBIN)/crd-full && mkdir -p $(LOCALBIN)/crd-full
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd:allowDangerousTypes=true paths="./..." output:crd:artifacts:config=$(LOCALBIN)/crd-full
	go run ./hack/crdsplit -in $(LOCALBIN)/crd-full -out config/crd/bases -policies config/policies/scene-rules.yaml -schema internal/requestrules/storyboardrequest.json
	hack/helm-chart.sh
	$(MAKE) --no-print-directory helm-docs-chart

.PHONY: api-docs
api-docs: crd-ref-docs ## Write docs/api-reference.md from the Go types in api/v1alpha1 (crd-ref-docs, markdown).
	$(CRD_REF_DOCS) --source-path=./api/v1alpha1 --config=hack/api-docs/config.yaml --renderer=markdown \
		--output-path=docs/api-reference.md --log-level=WARN

.PHONY: helm-chart
helm-chart: ## Refresh the Helm chart's copies of the CRDs and RBAC rules (dist/chart/files/) from config/.
	hack/helm-chart.sh

.PHONY: helm-docs-chart
helm-docs-chart: helm-docs ## Write dist/chart/README.md from the values' comments (helm-docs).
	$(HELM_DOCS) --chart-search-root dist/chart --template-files README.md.gotmpl --output-file README.md

.PHONY: generate
generate: controller-gen ## Generate DeepCopy methods.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./..."

# MONITORING_TEST is a module of its own (test/monitoring/go.mod): the Prometheus module its
# PromQL checks need stays out of the manager's go.mod. ./... at the top does not reach it.
MONITORING_TEST = test/monitoring

.PHONY: fmt
fmt: ## Run go fmt.
	go fmt ./...
	cd $(MONITORING_TEST) && go fmt ./...

.PHONY: vet
vet: ## Run go vet.
	go vet ./...
	cd $(MONITORING_TEST) && go vet ./...

.PHONY: envtest-assets
envtest-assets: ## Obtain kube-apiserver, etcd and kubectl for envtest (cached; built from source when it must).
	@hack/envtest-assets.sh >/dev/null

.PHONY: chromium
chromium: ## Find a Chromium for the kubectl plugin's browser test, or install Debian's (as root; hack/chromium.sh says what to install otherwise).
	@hack/chromium.sh >/dev/null

# TEST_TIMEOUT is each test package's limit. The slowest package, internal/controller, takes about
# 8 minutes on a 2-core machine (80% of go test's default 10m), and ran past 10m beside other
# builds; 30m leaves it a margin of almost 4x (docs/development.md).
TEST_TIMEOUT ?= 30m

.PHONY: test
test: manifests generate fmt vet envtest-assets kustomize helm cyclonedx-gomod chromium ## Run all tests, envtest ones against a real kube-apiserver and etcd.
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" KUSTOMIZE="$(KUSTOMIZE)" HELM="$(HELM)" CYCLONEDX_GOMOD="$(CYCLONEDX_GOMOD)" CHROMIUM="$$(hack/chromium.sh)" go test ./... -timeout $(TEST_TIMEOUT) -coverprofile cover.out
	cd $(MONITORING_TEST) && KUBEBUILDER_ASSETS="$$(../../hack/envtest-assets.sh)" go test ./...

# SEEDS is how many seeds make test-sim runs (make test runs the simulation's short form, 300).
# A search builds a world of a few MB per seed: at the default GOGC the collector runs every few
# MB and, sampling for a memory profile nobody asked for, walks every stack it sampled each time
# (a tenth of the CPU); GOGC=400 without the sampling runs 4,000 seeds in 70 s instead of 94 s.
SEEDS ?= 100000

.PHONY: test-sim
test-sim: ## The spend guard's simulation over SEEDS seeds (docs/spend-guard.md "The simulation"); a failing seed prints its replay command.
	GOGC=400 GODEBUG=memprofilerate=0 go test ./internal/spendguard/ -run TestSimulation -count=1 -v -timeout 0 -args -sim.seeds=$(SEEDS) -sim.all

.PHONY: test-faults-long
test-faults-long: envtest-assets ## The long variant of the process-level fault suite (docs/reliability.md); rows go to $(FAULTS_REPORT).
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" FAULTS_REPORT="$(FAULTS_REPORT)" go test ./test/faults/ -count=1 -v -timeout 60m -args -faults.long

FAULTS_REPORT ?= $(shell pwd)/bin/faults-report.jsonl


.PHONY: demo-test
demo-test: ## Run the demo non-interactively and check its end state (CI runs it after make test).
	hack/demo-test.sh

.PHONY: lint
lint: golangci-lint kube-api-linter lint-chart ## Run golangci-lint on all the code, kube-api-linter (API conventions) on api/, and helm lint on the chart.
	$(GOLANGCI_LINT) run
	cd $(MONITORING_TEST) && $(GOLANGCI_LINT) run
	$(KUBE_API_LINTER) run --config .golangci-kal.yml ./api/...

# The defaults must fail, naming the required value (an install with them would crash-loop), and
# each ci/*-values.yaml (chart-testing's convention, what `ct lint` renders) must pass --strict.
.PHONY: lint-chart
lint-chart: helm ## Run helm lint on dist/chart as a chart repository's CI does: the defaults fail naming service.baseURL, every ci/*-values.yaml passes.
	@if out="$$($(HELM) lint dist/chart 2>&1)"; then echo "$$out"; echo "helm lint passed with the default values: service.baseURL must be required" >&2; exit 1; fi; \
	  echo "$$out" | grep -q "missing property 'baseURL'" || { echo "$$out"; echo "helm lint with the default values must name service.baseURL" >&2; exit 1; }; \
	  echo "helm lint dist/chart (defaults): refused, missing property 'baseURL', as intended"
	@for f in dist/chart/ci/*-values.yaml; do $(HELM) lint --strict dist/chart --values "$$f" || exit 1; done

.PHONY: lint-fix
lint-fix: golangci-lint ## Run golangci-lint and apply its fixes.
	$(GOLANGCI_LINT) run --fix

.PHONY: verify-generated
verify-generated: manifests generate ## Fail when generated files differ from what is committed.
	@git diff --exit-code -- api config dist/chart docs/api-reference.md || { echo "Generated files are stale: run 'make manifests generate' and commit the result." >&2; exit 1; }

##@ Benchmarks

.PHONY: bench
bench: envtest-assets ## The scale benchmark (test/bench, docs/benchmarks.md): N renders against the manager built from this tree; not part of make test.
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" go test ./test/bench -run '^$$' -bench Scale -benchtime 1x -count=1 -timeout 60m -args \
		-bench.n=$(strip $(BENCH_N)) -bench.namespaces=$(strip $(BENCH_NAMESPACES)) -bench.keys=$(strip $(BENCH_KEYS)) \
		-bench.callbacks=$(strip $(BENCH_CALLBACKS)) -bench.budget=$(strip $(BENCH_BUDGET)) -bench.time-scale=$(strip $(BENCH_TIME_SCALE)) \
		-bench.manager-args="$(strip $(BENCH_MANAGER_ARGS))" -bench.out="$(abspath $(strip $(BENCH_OUT)))" \
		-bench.baseline="$(if $(strip $(BENCH_BASELINE)),$(abspath $(strip $(BENCH_BASELINE))))" -bench.label="$(strip $(BENCH_LABEL))" -bench.mix="$(strip $(BENCH_MIX))" $(BENCH_ARGS)

.PHONY: bench-pairs
bench-pairs: envtest-assets ## BENCH_PAIRS pairs of make bench without and with budgets, in ABBA order, and their summary (docs/benchmarks.md "How to run it"); BENCH_OUT is their directory.
	BENCH_PAIRS="$(strip $(BENCH_PAIRS))" BENCH_OUT="$(abspath $(if $(filter command line,$(origin BENCH_OUT)),$(BENCH_OUT),bin/bench-pairs))" MAKE="$(MAKE)" hack/bench-pairs.sh

# go test runs the benchmark in test/bench: the recipe makes BENCH_OUT and BENCH_BASELINE absolute.
BENCH_N ?= 1000 ## VideoRenders to create.
BENCH_NAMESPACES ?= 10 ## namespaces (tenants), one API key Secret each.
BENCH_KEYS ?= 5 ## distinct API keys (namespace i uses key i mod BENCH_KEYS).
BENCH_CALLBACKS ?= false ## true starts the manager with job-result callbacks.
BENCH_BUDGET ?= false ## true gives each namespace a VideoBudget with room for exactly its renders (the spend guard at scale).
BENCH_TIME_SCALE ?= 0.083333 ## simulator time scale (1/12: renders of 10-30 s).
BENCH_MANAGER_ARGS ?= --poll-min=2s --poll-max=6s ## flags passed to the manager, e.g. --service-rate-limit=2000.
BENCH_OUT ?= $(shell pwd)/bin/bench ## directory of the JSON and Markdown reports.
BENCH_BASELINE ?= ## a report JSON of an earlier run to print deltas against, e.g. bin/bench/<time>-n1000-polling.json.
BENCH_LABEL ?= ## name of the run in the report.
BENCH_PAIRS ?= 3 ## pairs make bench-pairs runs.
BENCH_MIX ?= ## a request mix, scene counts split evenly, e.g. 1,12,60 (docs/benchmarks.md "Renders people write"); empty: one bare scene each.
BENCH_ARGS ?= ## more -bench.* flags (go test ./test/bench -args -help lists them).

##@ Build

.PHONY: release
release: manifests kustomize helm cyclonedx-gomod ## Write the files of release VERSION (x.y.z) into dist/release/<VERSION>/, the manager image (an OCI archive, no container engine) included (docs/release.md); PLATFORMS=linux/amd64 builds one platform.
	@[ -n "$(filter-out dev,$(VERSION))" ] || { echo "make release needs VERSION=x.y.z" >&2; exit 1; }
	KUSTOMIZE="$(KUSTOMIZE)" HELM="$(HELM)" CYCLONEDX_GOMOD="$(CYCLONEDX_GOMOD)" IMAGE_REPO="$(IMAGE_REPO)" PLATFORMS="$(PLATFORMS)" \
		hack/release.sh $(VERSION) dist/release

.PHONY: build-installer
build-installer: manifests kustomize ## Write dist/install.yaml (CRDs, RBAC, Deployment of image IMG, service URL SERVICE_BASE_URL or a placeholder) for kubectl apply -f.
	hack/build-installer.sh $(KUSTOMIZE) $(IMG) dist/install.yaml "$(SERVICE_BASE_URL)"

# SERVICE_BASE_URL is the video service's base URL baked into dist/install.yaml; empty leaves the
# placeholder the manager refuses (a released install.yaml is built so).
SERVICE_BASE_URL ?=

.PHONY: build
build: manifests generate fmt vet ## Build the manager binary the way the image does (static, trimmed, versioned).
	VERSION=$(VERSION) hack/build-manager.sh

.PHONY: install-plugin
install-plugin: | $(LOCALBIN) ## Build the kubectl plugin into bin/kubectl-video, with bin/kubectl_complete-video for kubectl's completion: with bin/ on the PATH, run kubectl video --help.
	go build -trimpath -ldflags "-s -w -X github.com/videoops/video-operator/internal/version.Version=$(VERSION)" -o $(LOCALBIN)/kubectl-video ./cmd/kubectl-video
	install -m 0755 hack/kubectl_complete-video $(LOCALBIN)/kubectl_complete-video

.PHONY: plugin-screenshot
plugin-screenshot: envtest-assets chromium ## Refresh docs/images/kubectl-video-preview.png from the plugin's headless-Chromium test.
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" CHROMIUM="$$(hack/chromium.sh)" KUBECTL_VIDEO_SCREENSHOT="$(shell pwd)/docs/images/kubectl-video-preview.png" \
		go test ./internal/kubectlvideo/ -count=1 -ginkgo.focus=Chromium

.PHONY: run
run: manifests generate fmt vet ## Run the manager from your host against the cluster in your kubeconfig.
	go run ./cmd/manager

# CONTAINER_TOOL can be docker or podman.
CONTAINER_TOOL ?= docker

.PHONY: docker-build
docker-build: ## Build the manager image IMG (needs a container engine; its build stage is what make build runs).
	$(CONTAINER_TOOL) build --build-arg VERSION=$(VERSION) -t $(IMG) .

# KIND_CLUSTER is the kind cluster make kind-load loads the image into (docs/deploy.md).
KIND_CLUSTER ?= kind

.PHONY: kind-load
kind-load: ## Load the locally built image IMG into the kind cluster KIND_CLUSTER (after make docker-build; docs/deploy.md, not run by CI).
	kind load docker-image $(IMG) --name $(KIND_CLUSTER)

.PHONY: docker-push
docker-push: ## Push the manager image IMG.
	$(CONTAINER_TOOL) push $(IMG)

# PLATFORMS are the platforms of the released image and binaries (make docker-buildx, make release).
PLATFORMS ?= linux/amd64,linux/arm64

# docker-buildx as kubebuilder scaffolds it: the build stage runs on the builder's own platform
# (FROM --platform=$${BUILDPLATFORM}) and cross-compiles for each target (the Dockerfile passes
# TARGETARCH to hack/build-manager.sh); the result is pushed as one multi-platform image IMG.
.PHONY: docker-buildx
docker-buildx: ## Build and push the manager image IMG for PLATFORMS (needs docker with buildx).
	@command -v $(CONTAINER_TOOL) >/dev/null 2>&1 && $(CONTAINER_TOOL) buildx version >/dev/null 2>&1 || { \
		echo "docker-buildx needs $(CONTAINER_TOOL) with buildx, which this machine does not have." >&2; \
		echo "Without a container engine, 'make release' builds the image for $(PLATFORMS) as an OCI archive (docs/release.md)." >&2; \
		exit 1; }
	sed -e '1 s/\(^FROM\)/FROM --platform=\$$\{BUILDPLATFORM\}/; t' -e ' 1,// s//FROM --platform=\$$\{BUILDPLATFORM\}/' Dockerfile > Dockerfile.cross
	- $(CONTAINER_TOOL) buildx create --name video-operator-builder
	$(CONTAINER_TOOL) buildx use video-operator-builder
	- $(CONTAINER_TOOL) buildx build --push --platform=$(PLATFORMS) --build-arg VERSION=$(VERSION) --tag $(IMG) -f Dockerfile.cross .
	- $(CONTAINER_TOOL) buildx rm video-operator-builder
	rm Dockerfile.cross

##@ Deployment

# KUBECTL is the kubectl the deployment targets use; the one of the envtest assets
# ($$(hack/envtest-assets.sh)/kubectl) matches the Kubernetes version the CRDs are tested with.
KUBECTL ?= kubectl

ifndef ignore-not-found
  ignore-not-found = false
endif

.PHONY: install
install: manifests kustomize ## Install the admission policies (on an upgrade, waiting until they are in force), then the CRDs, into the cluster in your kubeconfig.
	$(KUSTOMIZE) build config/policies | $(KUBECTL) apply --server-side -f -
	if $(KUBECTL) get crd videorenders.video.videoops.io >/dev/null 2>&1; then hack/wait-policies.sh $(KUBECTL); fi
	$(KUSTOMIZE) build config/crd | $(KUBECTL) apply --server-side -f -

.PHONY: uninstall
uninstall: manifests kustomize ## Remove the CRDs from the cluster. ignore-not-found=true ignores missing ones.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) delete --ignore-not-found=$(ignore-not-found) -f -

# deploy renders config/default with the image IMG through a throw-away overlay in bin/ (kustomize
# wants a relative path to its base), so that it never edits the files in config/ (kustomize edit
# would rewrite them and drop their comments).
.PHONY: deploy
deploy: manifests kustomize ## Deploy the manager (config/default) with image IMG to the cluster in your kubeconfig: the admission policies first (in force before the CRDs change), then the rest.
	@mkdir -p $(LOCALBIN) && tmp=$$(mktemp -d $(LOCALBIN)/deploy.XXXXXX) && trap 'rm -rf "$$tmp"' EXIT && \
	printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- ../../config/default\n' > "$$tmp/kustomization.yaml" && \
	(cd "$$tmp" && $(KUSTOMIZE) edit set image ghcr.io/videoops/video-operator=$(IMG)) && \
	$(KUSTOMIZE) build "$$tmp" > "$$tmp/all.yaml" && \
	$(KUBECTL) apply --server-side -l video.videoops.io/admission-policy -f "$$tmp/all.yaml" && \
	if $(KUBECTL) get crd videorenders.video.videoops.io >/dev/null 2>&1; then hack/wait-policies.sh $(KUBECTL); fi && \
	$(KUBECTL) apply --server-side -f "$$tmp/all.yaml"

.PHONY: undeploy
undeploy: kustomize ## Remove the manager, its namespace, RBAC and the CRDs (with every video!). ignore-not-found=true ignores missing objects.
	$(KUSTOMIZE) build config/default | $(KUBECTL) delete --ignore-not-found=$(ignore-not-found) -f -

##@ Tools

.PHONY: kube-api-linter
kube-api-linter: $(KUBE_API_LINTER) ## Install the golangci-lint build with kube-api-linter into bin/.
$(KUBE_API_LINTER): | $(LOCALBIN)
	$(call go-install-tool,$(KUBE_API_LINTER),sigs.k8s.io/kube-api-linter/cmd/golangci-lint-kube-api-linter,$(KUBE_API_LINTER_VERSION),golangci-lint-kube-api-linter)

.PHONY: helm
helm: $(HELM) ## Install helm into bin/.
$(HELM): | $(LOCALBIN)
	$(call go-install-tool,$(HELM),helm.sh/helm/v3/cmd/helm,$(HELM_VERSION),helm)

.PHONY: crd-ref-docs
crd-ref-docs: $(CRD_REF_DOCS) ## Install crd-ref-docs into bin/.
$(CRD_REF_DOCS): | $(LOCALBIN)
	$(call go-install-tool,$(CRD_REF_DOCS),github.com/elastic/crd-ref-docs,$(CRD_REF_DOCS_VERSION),crd-ref-docs)

.PHONY: helm-docs
helm-docs: $(HELM_DOCS) ## Install helm-docs into bin/.
$(HELM_DOCS): | $(LOCALBIN)
	$(call go-install-tool,$(HELM_DOCS),github.com/norwoodj/helm-docs/cmd/helm-docs,$(HELM_DOCS_VERSION),helm-docs)

.PHONY: cyclonedx-gomod
cyclonedx-gomod: $(CYCLONEDX_GOMOD) ## Install cyclonedx-gomod (SBOM generator) into bin/.
$(CYCLONEDX_GOMOD): | $(LOCALBIN)
	$(call go-install-tool,$(CYCLONEDX_GOMOD),github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod,$(CYCLONEDX_GOMOD_VERSION),cyclonedx-gomod)

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Install controller-gen into bin/.
$(CONTROLLER_GEN): | $(LOCALBIN)
	$(call go-install-tool,$(CONTROLLER_GEN),sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_TOOLS_VERSION),controller-gen)

.PHONY: kustomize
kustomize: $(KUSTOMIZE) ## Install kustomize into bin/.
$(KUSTOMIZE): | $(LOCALBIN)
	$(call go-install-tool,$(KUSTOMIZE),sigs.k8s.io/kustomize/kustomize/v5,$(KUSTOMIZE_VERSION),kustomize)

.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT) ## Install golangci-lint into bin/.
$(GOLANGCI_LINT): | $(LOCALBIN)
	$(call go-install-tool,$(GOLANGCI_LINT),github.com/golangci/golangci-lint/v2/cmd/golangci-lint,$(GOLANGCI_LINT_VERSION),golangci-lint)

# go-install-tool installs package $(2) at version $(3), whose binary is named $(4), as $(1).
define go-install-tool
@[ -f "$(1)" ] || { \
set -e; \
echo "Installing $(2)@$(3) into bin/"; \
tmp=$$(mktemp -d); \
GOBIN=$$tmp GOWORK=off go install $(2)@$(3); \
mv $$tmp/$(4) $(1); \
rm -rf $$tmp; \
}
endef
