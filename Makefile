# Convenience targets; the README's commands work without make.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/waldur/site-agent/internal/cli.Version=$(VERSION)

.PHONY: build demo vclusters bench-vclusters test test-fast bench bench-events lint
build:
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o bin/site-agent ./cmd/site-agent
demo:
	go run ./cmd/site-agent-demo
# the virtual-clusters load tool (docs/virtual-clusters.md): a program of its own, never in the release binary
vclusters:
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o bin/site-agent-vclusters ./cmd/site-agent-vclusters
test:
	./scripts/test.sh
test-fast:
	SITE_AGENT_SKIP_REAL=1 FUZZTIME=5s ./scripts/test.sh
# bench prints the README's figures as one table (release build as a process against loopback
# simulators; the Rancher rows need the Kubernetes binaries of scripts/kube/build.sh).
# SITE_AGENT_FIGURES=launch,drain,report,rancher,rke2 selects groups (default all).
bench:
	SITE_AGENT_REAL_TESTS=1 go test -run '^$$' -bench '^BenchmarkFigures$$' -benchtime 1x -timeout 30m ./test/e2e/
# event → done latency and recovery after a broker restart, against real RabbitMQ (needs root
# the first time, to install it) and, when built, the real Kubernetes control plane
bench-events:
	./scripts/rabbitmq/up.sh
	SITE_AGENT_REAL_TESTS=1 go test -run '^$$' -bench EventLatency -benchtime 1x ./test/e2e/
# virtual clusters at scale (docs/virtual-clusters.md): 1,000 clusters of 3 Nodes and 10 Pods, the
# program with its own kube-apiserver and KWOK, against the Rancher simulator's tunnel server.
# Needs scripts/kube/build.sh and scripts/kwok/build.sh; SITE_AGENT_VC_BENCH_CLUSTERS and
# SITE_AGENT_VC_BENCH_LEASE (seconds) change the size and the Node Lease duration.
bench-vclusters:
	./scripts/kwok/build.sh >/dev/null
	SITE_AGENT_REAL_TESTS=1 go test -run '^$$' -bench '^BenchmarkVirtualClusters$$' -benchtime 1x -timeout 60m ./internal/vclusters/
lint:
	gofmt -l . && go vet ./...
