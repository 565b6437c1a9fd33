#!/usr/bin/env bash
# Writes the files of a release into <outdir>/<version>/ (`make release VERSION=x.y.z` runs it
# into dist/release/; test/deploy runs it into a temporary directory):
#   video-operator-<version>.tgz        the Helm chart, version <version>, appVersion v<version>,
#                                       image.digest pinned to the image below
#   install.yaml                        config/default with the image pinned to that digest
#   crds.yaml                           the CRDs alone (config/crd), for CRDs kept apart from every
#                                       manager release (docs/scale-out.md)
#   video-operator-image-<version>.oci.tar  the manager image for every platform, one OCI image
#                                       index in an OCI layout archive (hack/ociimage, no
#                                       container engine), reproducible: the same tree gives
#                                       the same digest
#   IMAGE-DIGEST                        that index's digest, sha256:...
#   manager-<os>-<arch>                 the manager, static (CGO off), per platform
#   kubectl-video-<os>-<arch>           the kubectl plugin, static, per platform
#   manager-<os>-<arch>.cdx.json        each manager binary's SBOM (CycloneDX 1.6, by cyclonedx-gomod
#                                       from the binary's build information: what ships, with the Go
#                                       standard library; reproducible, so also inside the image)
#   RELEASE-NOTES.md                    the version's CHANGELOG.md section
#   SHA256SUMS                          checksums of all the above
# Usage: hack/release.sh <version> <outdir>
# Environment: KUSTOMIZE, HELM, CYCLONEDX_GOMOD (the pinned tools), IMAGE_REPO (default
# ghcr.io/videoops/video-operator), PLATFORMS (default linux/amd64,linux/arm64; one platform
# keeps the test affordable), RELEASE_ALLOW_DIRTY=1 (build from an untagged or dirty tree: a
# rehearsal, never published), SOURCE_DATE_EPOCH (every timestamp in the image; default the
# commit time of HEAD), CA_BUNDLE (the CA bundle the image carries; default the build machine's
# /etc/ssl/certs/ca-certificates.crt).
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
if [[ -z $notes && ${RELEASE_ALLOW_DIRTY:-} == 1 && $version == *-* ]]; then
  # A rehearsed pre-release before its section (hack/release-check.sh said so).
  notes=$(awk '/^## \[Unreleased\]/ { on = 1; print; next } on && /^## / { exit } on { print }' "$root/CHANGELOG.md")
fi
[[ -n $notes ]] || die "CHANGELOG.md has no section \"## [$version]\": move the Unreleased entries under it first (docs/release.md)"

[[ $outdir != /* ]] && outdir=$PWD/$outdir
out=$outdir/$version
rm -rf "$out"
mkdir -p "$out"
printf '%s\n' "$notes" >"$out/RELEASE-NOTES.md"

IFS=, read -ra plats <<<"$platforms"
for p in "${plats[@]}"; do
  os=${p%/*} arch=${p#*/}
  echo "release $version: binaries for $os/$arch"
  GOOS=$os GOARCH=$arch OUT="$out/manager-$os-$arch" VERSION=$tag "$root/hack/build-manager.sh" >/dev/null
  # Licenses are detected from the module cache; the main module's own is not on the module proxy
  # (a warning, not an error): it is the LICENSE file, Apache-2.0. -noserial and -notimestamp
  # leave out what would change the image's digest at every build: the SBOM is in the image.
  "$CYCLONEDX_GOMOD" bin -json -std -licenses -noserial -notimestamp -version "$tag" -output "$out/manager-$os-$arch.cdx.json" \
    "$out/manager-$os-$arch" 2>"$out/.sbom.log" || { cat "$out/.sbom.log" >&2; die "cyclonedx-gomod failed"; }
  rm -f "$out/.sbom.log"
  (cd "$root" && CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath \
    -ldflags "-s -w -X github.com/videoops/video-operator/internal/version.Version=$tag" \
    -o "$out/kubectl-video-$os-$arch" ./cmd/kubectl-video)
done

# The image is built from the binaries and SBOMs above, so that what the chart and install.yaml
# pin is what was built. Its timestamps are the commit's time: the same tree gives the same digest.
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || true)}
[[ -n $epoch ]] || die "no SOURCE_DATE_EPOCH and no commit to take the image's time from"
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
image_args=()
for p in "${plats[@]}"; do
  os=${p%/*} arch=${p#*/}
  image_args+=(-binary "$p=$out/manager-$os-$arch" -sbom "$p=$out/manager-$os-$arch.cdx.json")
done
echo "release $version: image $image_repo:$tag for $platforms"
digest=$(cd "$root" && go run ./hack/ociimage -out "$out/video-operator-image-$version.oci.tar" -ref "$image_repo:$tag" \
  -epoch "$epoch" -version "$tag" -revision "$revision" -ca-bundle "${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}" "${image_args[@]}")
[[ $digest =~ ^sha256:[0-9a-f]{64}$ ]] || die "hack/ociimage printed \"$digest\", not a digest"
echo "$digest" >"$out/IMAGE-DIGEST"

echo "release $version: chart (image.digest $digest)"
helm_home=$(mktemp -d)
trap 'rm -rf "$helm_home"' EXIT
# The packaged chart pins the image it was released with: a copy of dist/chart with image.digest
# set (values.yaml has one "digest:" line, under image).
mkdir -p "$helm_home/chart"
cp -R "$root/dist/chart/." "$helm_home/chart/video-operator"
grep -q '^  digest: ""$' "$helm_home/chart/video-operator/values.yaml" ||
  die "dist/chart/values.yaml has no line '  digest: \"\"' under image to pin the digest on"
sed -i "s|^  digest: \"\"\$|  digest: \"$digest\"|" "$helm_home/chart/video-operator/values.yaml"
HELM_CACHE_HOME=$helm_home HELM_CONFIG_HOME=$helm_home HELM_DATA_HOME=$helm_home \
  "$HELM" package "$helm_home/chart/video-operator" --version "$version" --app-version "$tag" --destination "$out" >/dev/null

echo "release $version: install.yaml (image $image_repo@$digest)"
"$root/hack/build-installer.sh" "$KUSTOMIZE" "$image_repo@$digest" "$out/install.yaml" >/dev/null

echo "release $version: crds.yaml"
"$KUSTOMIZE" build "$root/config/crd" >"$out/crds.yaml"

(cd "$out" && sha256sum -- $(ls | grep -v '^SHA256SUMS$') >SHA256SUMS)
echo "release $version written to $out:"
(cd "$out" && ls -l)
