#!/usr/bin/env bash
# make demo: obtains the Kubernetes binaries (kube-apiserver, etcd, kubectl; cached after the
# first time), builds the demo program into bin/ and runs it with the arguments given (make demo
# DEMO_ARGS="--help" lists them). Progress goes to the terminal; the demo's files go to .demo/.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

say() { printf '%s\n' "$*" >&2; }

say "video-operator demo: checking for the Kubernetes test binaries (kube-apiserver, etcd, kubectl)."
say "The first time on a machine they are downloaded or built from source, which can take about"
say "5 minutes; the progress is shown below. Later runs reuse them."
assets=$(hack/envtest-assets.sh)
say "Found them in $assets."

# The first build compiles the Kubernetes client libraries and is silent for a minute or two:
# show that it is still working.
say "Building the demo program into bin/video-demo..."
start=$SECONDS
(while sleep 20; do say "  ... still building, $((SECONDS - start)) s so far (only the first build is this slow)"; done) &
ticker=$!
trap 'kill "$ticker" 2>/dev/null || true' EXIT
go build -o bin/video-demo ./cmd/video-demo
kill "$ticker" 2>/dev/null || true
wait "$ticker" 2>/dev/null || true
trap - EXIT
say ""

# exec, so that Ctrl-C and SIGTERM reach the demo itself, which then stops everything it started.
KUBEBUILDER_ASSETS="$assets" exec bin/video-demo "$@"
