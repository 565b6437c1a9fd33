#!/usr/bin/env bash
# Writes the files of a release into <outdir>/<version>/ (`make release VERSION=x.y.z` runs it
# into dist/release/; test/deploy runs it into a temporary directory):
#   video-operator-<version>.tgz        the Helm chart, version <version>, appVersion v<version>
#   install.yaml                        config/default with the image pinned to v<version>
#   manager-<os>-<arch>                 the manager, static (CGO off), per platform
#   kubectl-video-<os>-<arch>           the kubectl plugin, static, per platform
#   manager-<os>-<arch>.cdx.json        each manager binary's SBOM (CycloneDX 1.6, by cyclonedx-gomod
#                                       from the binary's build information: what ships, with the Go
#                                       standard library)
#   RELEASE-NOTES.md                    the version's CHANGELOG.md section
#   SHA256SUMS                          checksums of all the above
# Usage: hack/release.sh <version> <outdir>
# Environment: KUSTOMIZE, HELM, CYCLONEDX_GOMOD (the pinned tools), IMAGE_REPO (default
# ghcr.io/videoops/video-operator), PLATFORMS (default linux/amd64,linux/arm64; one platform
# keeps the test affordable), RELEASE_ALLOW_DIRTY=1 (build from an untagged or dirty tree: a
# rehearsal, never published).
# The image itself is built by `make docker-buildx` where a container engine runs (docs/release.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=${1:?usage: hack/release.sh <version> <outdir>}
outdir=${2:?usage: hack/release.sh <version> <outdir>}
version=${version#v}
: "${KUSTOMIZE:?KUSTOMIZE must name the pinned kustomize (make release sets it)}"
: "${HELM:?HELM must name the pinned helm (make release sets it)}"
: "${CYCLONEDX_GOMOD:?CYCLONEDX_GOMOD must name the pinned cyclonedx-gomod (make release sets it)}"
image_repo=${IMAGE_REPO:-ghcr.io/videoops/video-operator}
platforms=${PLATFORMS:-linux/amd64,linux/arm64}

die() { echo "release: $*" >&2; exit 1; }
# Semantic versioning, as Helm requires of a chart version.
[[ $version =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]] ||
  die "VERSION \"$version\" is not x.y.z (or x.y.z-pre): it becomes the chart's version and the image tag v$version"
tag=v$version

# A dated CHANGELOG section, a clean tree and the tag v<version> on HEAD, unless
# RELEASE_ALLOW_DIRTY=1 (a rehearsal): see hack/release-check.sh.
"$root/hack/release-check.sh" "$version"

# The release notes are the CHANGELOG's section of this version: no section, no release.
notes=$(awk -v v="$version" '
  $0 ~ "^## \\[" v "\\]" { on = 1; print; next }
  on && /^## / { exit }
  on { print }' "$root/CHANGELOG.md")
[[ -n $notes ]] || die "CHANGELOG.md has no section \"## [$version]\": move the Unreleased entries under it first (docs/release.md)"

[[ $outdir != /* ]] && outdir=$PWD/$outdir
out=$outdir/$version
rm -rf "$out"
mkdir -p "$out"
printf '%s\n' "$notes" >"$out/RELEASE-NOTES.md"

echo "release $version: chart"
helm_home=$(mktemp -d)
trap 'rm -rf "$helm_home"' EXIT
HELM_CACHE_HOME=$helm_home HELM_CONFIG_HOME=$helm_home HELM_DATA_HOME=$helm_home \
  "$HELM" package "$root/dist/chart" --version "$version" --app-version "$tag" --destination "$out" >/dev/null

echo "release $version: install.yaml (image $image_repo:$tag)"
"$root/hack/build-installer.sh" "$KUSTOMIZE" "$image_repo:$tag" "$out/install.yaml" >/dev/null

IFS=, read -ra plats <<<"$platforms"
for p in "${plats[@]}"; do
  os=${p%/*} arch=${p#*/}
  echo "release $version: binaries for $os/$arch"
  GOOS=$os GOARCH=$arch OUT="$out/manager-$os-$arch" VERSION=$tag "$root/hack/build-manager.sh" >/dev/null
  # Licenses are detected from the module cache; the main module's own is not on the module proxy
  # (a warning, not an error): it is the LICENSE file, Apache-2.0.
  "$CYCLONEDX_GOMOD" bin -json -std -licenses -version "$tag" -output "$out/manager-$os-$arch.cdx.json" \
    "$out/manager-$os-$arch" 2>"$out/.sbom.log" || { cat "$out/.sbom.log" >&2; die "cyclonedx-gomod failed"; }
  rm -f "$out/.sbom.log"
  (cd "$root" && CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath \
    -ldflags "-s -w -X github.com/videoops/video-operator/internal/version.Version=$tag" \
    -o "$out/kubectl-video-$os-$arch" ./cmd/kubectl-video)
done

(cd "$out" && sha256sum -- $(ls | grep -v '^SHA256SUMS$') >SHA256SUMS)
echo "release $version written to $out:"
(cd "$out" && ls -l)
