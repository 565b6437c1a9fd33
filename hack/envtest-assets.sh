#!/usr/bin/env bash
# Prints the directory holding kube-apiserver, etcd and kubectl for envtest, obtaining them on
# first use. Progress goes to stderr; the only thing on stdout is the directory.
#
# Order, cheapest first:
#   1. $KUBEBUILDER_ASSETS, when it already holds the binaries;
#   2. the version-keyed cache, shared by every clone on this machine and laid out the way
#      setup-envtest lays out its store, so either tool reuses the other's binaries:
#      ${ENVTEST_CACHE_DIR:-${XDG_DATA_HOME:-~/.local/share}/kubebuilder-envtest}/k8s/<version>-<os>-<arch>;
#   3. setup-envtest's download, with a short time limit (it fails at once without GitHub);
#   4. a build from the Go module proxy using the pinned modules under hack/envtest/.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=envtest/versions.env
. "$root/hack/envtest/versions.env"

say() { printf 'envtest-assets: %s\n' "$*" >&2; }
has_assets() { [ -x "$1/kube-apiserver" ] && [ -x "$1/etcd" ] && [ -x "$1/kubectl" ]; }

if [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ -x "$KUBEBUILDER_ASSETS/kube-apiserver" ] && [ -x "$KUBEBUILDER_ASSETS/etcd" ]; then
  echo "$KUBEBUILDER_ASSETS"
  exit 0
fi

goos=$(go env GOOS)
goarch=$(go env GOARCH)
store=${ENVTEST_CACHE_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/kubebuilder-envtest}
dest="$store/k8s/$KUBE_VERSION-$goos-$goarch"

if has_assets "$dest"; then
  echo "$dest"
  exit 0
fi

# The versions in the tool modules must be the ones versions.env names, or the cache key lies.
grep -Eq "k8s.io/kubernetes v$KUBE_VERSION( |\$)" "$root/hack/envtest/kube-apiserver/go.mod" || {
  say "hack/envtest/kube-apiserver/go.mod does not require k8s.io/kubernetes v$KUBE_VERSION (see hack/envtest/versions.env)"
  exit 1
}
grep -Eq "go.etcd.io/etcd/server/v3 v$ETCD_VERSION( |\$)" "$root/hack/envtest/etcd/go.mod" || {
  say "hack/envtest/etcd/go.mod does not require go.etcd.io/etcd/server/v3 v$ETCD_VERSION (see hack/envtest/versions.env)"
  exit 1
}

setup_envtest="$root/bin/setup-envtest-$SETUP_ENVTEST_VERSION"
if [ "${ENVTEST_SKIP_DOWNLOAD:-}" != "true" ]; then
  if [ ! -x "$setup_envtest" ]; then
    say "installing setup-envtest $SETUP_ENVTEST_VERSION into bin/"
    tmpbin=$(mktemp -d)
    GOBIN=$tmpbin GOWORK=off go install "sigs.k8s.io/controller-runtime/tools/setup-envtest@$SETUP_ENVTEST_VERSION" >&2
    mkdir -p "$root/bin"
    mv "$tmpbin/setup-envtest" "$setup_envtest"
    rmdir "$tmpbin"
  fi
  say "trying setup-envtest download of Kubernetes $KUBE_VERSION (60 s limit)"
  limit=()
  command -v timeout >/dev/null && limit=(timeout 60)
  if path=$("${limit[@]}" "$setup_envtest" use "$KUBE_VERSION" --bin-dir "$store" -p path 2>/dev/null) && [ -n "$path" ] && [ -x "$path/kube-apiserver" ]; then
    # setup-envtest does not ship kubectl for every version; ours is needed by the demo.
    if [ -x "$path/kubectl" ]; then
      echo "$path"
      exit 0
    fi
    say "the download has no kubectl; building the assets instead"
  else
    say "download unavailable; building the assets from the Go module proxy instead"
  fi
fi

# Build into a private folder and move it into place at the end, so an interrupted build never
# leaves a cache entry that looks complete, and two concurrent builds cannot mix their files.
mkdir -p "$store/k8s"
work=$(mktemp -d "$store/k8s/.build-$KUBE_VERSION-XXXXXX")
ticker=""
cleanup() {
  [ -n "$ticker" ] && kill "$ticker" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

build() { # build <name> <module dir> <package> [ldflags]
  local name=$1 dir=$2 pkg=$3 ldflags=${4:-}
  local start=$SECONDS
  say "building $name (started at $(date +%H:%M:%S))"
  (while sleep 20; do say "  ... still building $name, $((SECONDS - start)) s so far"; done) &
  ticker=$!
  (cd "$root/hack/envtest/$dir" && GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 \
    go build -trimpath -ldflags "-s -w $ldflags" -o "$work/$name" "$pkg") >&2
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  ticker=""
  say "built $name in $((SECONDS - start)) s"
}

say "building Kubernetes $KUBE_VERSION test binaries from source: this happens once per machine"
say "and takes about 5 minutes on 2 cores (the result is cached in $dest)"
minor=$(echo "$KUBE_VERSION" | cut -d. -f2)
kv="-X k8s.io/component-base/version.gitVersion=v$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
build etcd etcd go.etcd.io/etcd/server/v3
build kubectl kube-apiserver k8s.io/kubernetes/cmd/kubectl "$kv"
build kube-apiserver kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$kv"

"$work/kube-apiserver" --version >&2
if [ -e "$dest" ] && has_assets "$dest"; then
  say "another build finished first; keeping its binaries"
else
  rm -rf "$dest"
  chmod 755 "$work" # mktemp -d made it private; the cache is shared by every clone
  mv "$work" "$dest"
  work=""
fi
say "envtest assets ready in $dest"
echo "$dest"
