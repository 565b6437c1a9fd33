# The manager image: a static binary on distroless, running as a non-root user.
# The build stage runs hack/build-manager.sh, the same script `make build` runs.
FROM golang:1.26 AS builder
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
WORKDIR /workspace
# Dependencies first, so that a code change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY internal/ internal/
COPY hack/build-manager.sh hack/
RUN GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} OUT=/workspace/manager VERSION=${VERSION} hack/build-manager.sh

FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /workspace/manager .
USER 65532:65532
ENTRYPOINT ["/manager"]
