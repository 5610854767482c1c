# syntax=docker/dockerfile:1

# Build stage: a static binary, no cgo, reproducible paths, no debug info.
FROM golang:1.27.3-bookworm AS build
WORKDIR /src
# Dependencies first, so source edits do not invalidate the module download layer.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/restmcp ./cmd/restmcp

# Final stage: distroless static, which has CA certificates (for https
# upstreams and rediss://) and tzdata, no shell, and runs as uid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/restmcp /restmcp
# restmcp listens on 127.0.0.1:8080 by default, which is unreachable from
# outside a container; listen on every interface instead.
ENV RESTMCP_ADDR=0.0.0.0:8080
EXPOSE 8080
USER nonroot:nonroot
# restmcp health GETs /health on RESTMCP_ADDR (127.0.0.1 for 0.0.0.0): the
# image has no shell or curl.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 CMD ["/restmcp", "health"]
ENTRYPOINT ["/restmcp"]
