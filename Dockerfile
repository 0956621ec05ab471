# Multi-stage build: a static binary on a distroless, non-root base.
#   docker build --build-arg VERSION=$(git describe --tags --always) -t site-agent .
#   docker run -v /etc/waldur:/etc/waldur:ro --read-only --tmpfs /tmp site-agent -m all -c /etc/waldur/waldur-site-agent-config.yaml
# Without Docker or a registry: scripts/container/build.sh (buildah, FROM scratch).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/waldur/site-agent/internal/cli.Version=${VERSION}" \
      -o /out/site-agent ./cmd/site-agent

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/site-agent /usr/local/bin/site-agent
USER nonroot:nonroot
ENV SITE_AGENT_HEARTBEAT_FILE=/tmp/waldur-site-agent-heartbeat
HEALTHCHECK --interval=60s --timeout=10s CMD ["/usr/local/bin/site-agent", "healthz", "--liveness-only", "--heartbeat-file", "/tmp/waldur-site-agent-heartbeat"]
ENTRYPOINT ["/usr/local/bin/site-agent"]
CMD ["--help"]
