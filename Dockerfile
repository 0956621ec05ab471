# Multi-stage build: a static binary on a distroless, non-root base.
#   docker build --build-arg VERSION=$(git describe --tags --always) --build-arg COMMIT=$(git rev-parse HEAD) -t site-agent .
#   docker run -v /etc/waldur:/etc/waldur:ro --read-only --tmpfs /tmp site-agent -m all -c /etc/waldur/waldur-site-agent-config.yaml
# Without Docker or a registry: scripts/container/build.sh (buildah, FROM scratch).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
COPY scripts/release/incumbent-names ./
ARG VERSION=dev
ARG COMMIT=
ARG BUILD_DATE=
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/waldur/site-agent/internal/cli.Version=${VERSION} -X github.com/waldur/site-agent/internal/cli.Commit=${COMMIT} -X github.com/waldur/site-agent/internal/cli.BuildDate=${BUILD_DATE}" \
      -o /out/bin/site-agent ./cmd/site-agent && \
    sed -e 's/#.*//' -e '/^[[:space:]]*$/d' incumbent-names | while read -r name; do ln -s site-agent "/out/bin/$name"; done

FROM gcr.io/distroless/static-debian12:nonroot
# site-agent and the incumbent's command names (waldur_site_healthz, …) as links to it.
COPY --from=build /out/bin/ /usr/local/bin/
USER nonroot:nonroot
ENV SITE_AGENT_HEARTBEAT_FILE=/tmp/waldur-site-agent-heartbeat
HEALTHCHECK --interval=60s --timeout=10s CMD ["/usr/local/bin/site-agent", "healthz", "--liveness-only", "--heartbeat-file", "/tmp/waldur-site-agent-heartbeat"]
ENTRYPOINT ["/usr/local/bin/site-agent"]
CMD ["--help"]
