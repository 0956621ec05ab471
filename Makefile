# Convenience targets; the README's commands work without make.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
# The commit's time, not the clock's: the same source builds the same binary.
BUILD_DATE ?= $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
CLI_PKG := github.com/waldur/site-agent/internal/cli
# `site-agent version` prints these; where one is empty it falls back to the build information.
LDFLAGS := -s -w -X $(CLI_PKG).Version=$(VERSION) -X $(CLI_PKG).Commit=$(COMMIT) -X $(CLI_PKG).BuildDate=$(BUILD_DATE)

.PHONY: build install release demo vclusters bench-vclusters bench-vclusters-rancher test test-fast bench bench-events lint
build:
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o bin/site-agent ./cmd/site-agent

# A source install: the binary and the Python agent's command names as links to it
# (`make build && sudo make install`; PREFIX and DESTDIR as usual). The systemd units in
# systemd/ expect /usr/bin/site-agent: PREFIX=/usr, or a drop-in with another ExecStart.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
INCUMBENT_NAMES := $(shell sed -e 's/\#.*//' scripts/release/incumbent-names)
install:
	@test -x bin/site-agent || $(MAKE) build
	install -d "$(DESTDIR)$(BINDIR)"
	install -m 0755 bin/site-agent "$(DESTDIR)$(BINDIR)/site-agent"
	for name in $(INCUMBENT_NAMES); do ln -sfn site-agent "$(DESTDIR)$(BINDIR)/$$name"; done

# Tarballs, .deb and .rpm, CycloneDX SBOMs and SHA256SUMS for linux amd64 and arm64 in dist/
# (scripts/release/build.sh; the packaging tools are built from the module proxy and cached).
release:
	VERSION="$(VERSION)" LDFLAGS="$(LDFLAGS)" ./scripts/release/build.sh

# print-VAR prints a variable (scripts/release/build.sh reads VERSION and LDFLAGS so).
print-%:
	@echo '$($*)'
demo:
	go run ./cmd/site-agent-demo
# the virtual-clusters load tool (docs/virtual-clusters.md): a program of its own, never in the release binary
vclusters:
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o bin/site-agent-vclusters ./cmd/site-agent-vclusters
test:
	./scripts/test.sh
test-fast:
	SITE_AGENT_SKIP_REAL=1 FUZZ_SCALE=30 ./scripts/test.sh
# bench prints the README's figures as one table (release build as a process against loopback
# simulators; the Rancher rows need the Kubernetes binaries of scripts/kube/build.sh).
# SITE_AGENT_FIGURES=launch,drain,report,rancher,rke2,diagnostics selects groups (default all).
bench:
	SITE_AGENT_REAL_TESTS=1 go test -run '^$$' -bench '^BenchmarkFigures$$' -benchtime 1x -timeout 30m ./test/e2e/
# event → done latency and recovery after a broker restart, against real RabbitMQ (needs root
# the first time, to install it) and, when built, the real Kubernetes control plane
bench-events:
	./scripts/rabbitmq/up.sh
	SITE_AGENT_REAL_TESTS=1 go test -run '^$$' -bench EventLatency -benchtime 1x ./test/e2e/
# virtual clusters at scale (docs/virtual-clusters.md): 1,000 clusters of 3 Nodes and 10 Pods, the
# program with its own kube-apiserver and KWOK, against the Rancher simulator's tunnel server.
# Needs scripts/kube/build.sh; builds KWOK and etcd (scripts/{kwok,etcd}/build.sh); SITE_AGENT_VC_BENCH_CLUSTERS and
# SITE_AGENT_VC_BENCH_LEASE (seconds) change the size and the Node Lease duration.
bench-vclusters:
	./scripts/kwok/build.sh >/dev/null
	SITE_AGENT_ETCD_BIN="$$(./scripts/etcd/build.sh | tail -1)" SITE_AGENT_REAL_TESTS=1 go test -run '^$$' -bench '^BenchmarkVirtualClusters$$' -benchtime 1x -timeout 60m ./internal/vclusters/
# virtual clusters in the real Rancher (docs/virtual-clusters.md, issue 16): Rancher's RSS and CPU per
# connected cluster and its API latency at 0, 10, 50 and 100 clusters (SITE_AGENT_VC_RANCHER_STEPS,
# SITE_AGENT_VC_RANCHER_SAMPLES change them), against the Rancher of scripts/rancher/up.sh (started
# here if it is not up; stop it with scripts/rancher/down.sh). Needs scripts/kube/build.sh.
bench-vclusters-rancher:
	./scripts/kwok/build.sh >/dev/null
	./scripts/rancher/up.sh
	SITE_AGENT_REAL_TESTS=1 SITE_AGENT_REQUIRE_REAL=1 go test -run '^$$' -bench '^BenchmarkVirtualClustersRealRancher$$' -benchtime 1x -timeout 90m ./internal/vclusters/
lint:
	gofmt -l . && go vet ./...
