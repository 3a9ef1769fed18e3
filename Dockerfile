# syntax=docker/dockerfile:1

# Build: a static binary (no cgo), so it runs on distroless/static.
FROM golang:1.26-bookworm AS build
WORKDIR /src

# Modules first, in a layer of their own: it is rebuilt only when go.mod or
# go.sum change, not on every source edit.
COPY go.mod go.sum ./
RUN go mod download

COPY . .
ARG VERSION=dev
RUN --mount=type=cache,target=/root/.cache/go-build \
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/relay ./cmd/relay

# Run: distroless static carries CA certificates (for https webhooks) and
# tzdata, and no shell.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/relay /relay
# The documented defaults, for reference or as a starting point. relay reads
# it only when told to (RELAY_CONFIG=/etc/relay/relay.yaml or --config);
# RELAY_* variables work without it.
COPY configs/relay.yaml /etc/relay/relay.yaml
USER 65532:65532
# relay listens on loopback only when no address is given and clients need no
# credentials; in a container that would be unreachable through the
# published port, so the image names the address explicitly.
ENV RELAY_ADDR=:8080
EXPOSE 8080
ENTRYPOINT ["/relay"]
