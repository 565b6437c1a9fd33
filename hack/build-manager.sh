#!/usr/bin/env bash
# Builds the manager as the image ships it: a static binary (no cgo), with paths trimmed and the
# version stamped in. `make build` and the Dockerfile's build stage both run this script, so a
# green `make build` tests the image's build command (no container engine is needed).
#   OUT      where to write the binary (default bin/manager)
#   VERSION  the version to stamp (default: git describe, or "dev")
#   GOOS, GOARCH  as usual, for another platform
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${OUT:-bin/manager}
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
# internal/version.Version is the version the manager logs and sends in its User-Agent.
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/videoops/video-operator/internal/version.Version=$version" -o "$out" ./cmd/manager
echo "built $out (version $version)"
