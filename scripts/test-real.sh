#!/usr/bin/env bash
# Tier 2: tests against real servers that run on this machine, each installed or built by its
# own script and cached between runs:
#   - Kubernetes: kube-apiserver + kube-controller-manager v1.36.3 built from the module proxy
#     (scripts/kube/build.sh, cached in ~/.cache/site-agent) with Debian's etcd, and KWOK v0.8.0
#     (scripts/kwok/build.sh, same cache) as the virtual clusters' kubelet stand-in;
#   - OpenStack Zed APIs from Debian's packages on PostgreSQL (scripts/openstack/up.sh, root),
#     with real Nova servers (--compute: Glance, conductor, scheduler, nova-compute and
#     cinder-volume with fake drivers, on the RabbitMQ below) for the rke2 backend;
#   - Vault: a real Vault core in a separate test module (scripts/vault/test.sh);
#   - leader election: the elector and two replicas of the binary against the kube-apiserver;
#   - container: the OCI image built without a registry and run read-only, non-root with podman
#     (scripts/container/test.sh; installs buildah, podman, runc; root);
#   - Helm: the chart linted, rendered and dry-run applied to the kube-apiserver, with Helm
#     built from the module proxy and cached (scripts/helm/build.sh);
#   - RabbitMQ with STOMP and Web-STOMP from Debian's package (scripts/rabbitmq/up.sh);
#   - a soak: the tunnel, leader and events packages 20 times each, two copies at once under
#     -race (their timing-sensitive tests must not flake under load); SOAK=0 leaves it out.
# Tests run with SITE_AGENT_REQUIRE_REAL=1: a missing server fails instead of skipping.
# OPENSTACK=0 / KUBE=0 / VAULT=0 / CONTAINER=0 / HELM=0 / RABBITMQ=0 leave a part out (e.g. on a
# machine without root). HELM needs KUBE. COMPUTE=0 leaves out real Nova servers (OpenStack
# APIs only); compute uses the RabbitMQ broker even with RABBITMQ=0.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
export SITE_AGENT_REAL_TESTS=1 SITE_AGENT_REQUIRE_REAL=1
log() { printf '\n== real: %s\n' "$*"; }
t0=$(date +%s)
elapsed() { echo "$(( $(date +%s) - t0 )) s"; }

# OpenStack installs Debian packages and needs root. As a normal user (outside CI) that part
# is skipped with a notice instead of failing; CI runs as root and must run everything.
if [ -z "${OPENSTACK:-}" ] && [ "$(id -u)" != 0 ] && [ "${CI:-}" != true ]; then
  echo "NOTICE: not root: skipping the real OpenStack tests (they install Debian packages); run as root or set OPENSTACK=1" >&2
  OPENSTACK=0
fi
if [ -z "${CONTAINER:-}" ] && [ "$(id -u)" != 0 ] && [ "${CI:-}" != true ]; then
  echo "NOTICE: not root: skipping the container test (it installs and runs podman as root); run as root or set CONTAINER=1" >&2
  CONTAINER=0
fi
[ "${KUBE:-1}" = 1 ] || HELM=0
helm_pid=""
if [ "${HELM:-1}" = 1 ]; then
  # Helm compiles while Kubernetes compiles (or its cached binaries are checked): both are Go
  # builds, and the second core would otherwise idle during the link steps and downloads.
  log "building Helm in the background (log: /tmp/site-agent-helm-build.log)"
  ./scripts/helm/build.sh >/tmp/site-agent-helm-build.log 2>&1 &
  helm_pid=$!
fi
os_pid=""
[ "${OPENSTACK:-1}" = 1 ] || COMPUTE=0
os_flags=()
[ "${COMPUTE:-1}" = 0 ] || os_flags=(--compute)
if [ "${OPENSTACK:-1}" = 1 ]; then
  # apt and database syncs are mostly waiting: let them run while Kubernetes compiles.
  log "starting OpenStack ${os_flags[*]} in the background (log: /tmp/site-agent-openstack-up.log)"
  ./scripts/openstack/up.sh "${os_flags[@]}" >/tmp/site-agent-openstack-up.log 2>&1 &
  os_pid=$!
fi

# RabbitMQ: installing the package needs root; once installed a normal user can run it.
if [ -z "${RABBITMQ:-}" ] && [ "$(id -u)" != 0 ] && [ "${CI:-}" != true ] &&
	! dpkg-query -W -f '${Status}' rabbitmq-server 2>/dev/null | grep -q 'install ok installed'; then
  echo "NOTICE: not root and rabbitmq-server is not installed: skipping the real RabbitMQ tests; run as root or set RABBITMQ=1" >&2
  RABBITMQ=0
fi
rmq_pid=""
if [ "${RABBITMQ:-1}" = 1 ]; then
  log "starting RabbitMQ in the background (log: /tmp/site-agent-rabbitmq-up.log)"
  ./scripts/rabbitmq/up.sh >/tmp/site-agent-rabbitmq-up.log 2>&1 &
  rmq_pid=$!
fi

packages=(./internal/testenv/...)
e2e=()
if [ "${KUBE:-1}" = 1 ]; then
  log "Kubernetes control plane binaries ($(elapsed))"
  ./scripts/kube/build.sh
  log "KWOK, the virtual clusters' kubelet stand-in ($(elapsed))"
  SITE_AGENT_KWOK_BIN="$(./scripts/kwok/build.sh | tail -1)"
  export SITE_AGENT_KWOK_BIN
  packages+=(./internal/backends/rancher/... ./internal/backends/rke2/argocd/ ./internal/leader/... ./internal/vclusters/...)
  e2e+=(Rancher LeaderElection)
fi
if [ -n "$os_pid" ]; then
  log "waiting for OpenStack ($(elapsed))"
  if ! wait "$os_pid"; then
    tail -50 /tmp/site-agent-openstack-up.log
    echo "scripts/openstack/up.sh failed" >&2
    exit 1
  fi
  tail -3 /tmp/site-agent-openstack-up.log
  packages+=(./internal/backends/openstack/...)
  e2e+=(OpenStack)
  if [ "${COMPUTE:-1}" = 1 ]; then
    packages+=(./internal/backends/rke2/novainfra/...)
    e2e+=(RealNova)
  fi
fi

if [ -n "$rmq_pid" ]; then
  log "waiting for RabbitMQ ($(elapsed))"
  if ! wait "$rmq_pid"; then
    tail -30 /tmp/site-agent-rabbitmq-up.log
    echo "scripts/rabbitmq/up.sh failed" >&2
    exit 1
  fi
  tail -2 /tmp/site-agent-rabbitmq-up.log
  packages+=(./internal/events/...)
  e2e+=(RealRabbitMQ)
fi

log "go test (real servers) ${packages[*]} ($(elapsed))"
# -p 1: the OpenStack crash test restarts neutron-server, which other packages also use
go test -race -count=1 -p 1 -timeout 30m "${packages[@]}"
if [ "${SOAK:-1}" = 1 ]; then
  soak=(./internal/vclusters/tunnel/)
  [ "${KUBE:-1}" = 1 ] && soak+=(./internal/leader/)
  [ -n "$rmq_pid" ] && soak+=(./internal/events/)
  log "soak: ${soak[*]} -count=20, two copies at once ($(elapsed))"
  soak_t0=$(date +%s)
  go test -race -count=1 -run '^$' "${soak[@]}" >/dev/null # build once, then run twice at once
  pids=()
  for copy in 1 2; do
    nice -n 5 go test -race -count=20 -p 1 -timeout 30m "${soak[@]}" >"/tmp/site-agent-soak-$copy.log" 2>&1 &
    pids+=($!)
  done
  soak_failed=0
  for copy in 1 2; do
    if ! wait "${pids[$((copy - 1))]}"; then
      soak_failed=1
      grep -E -B2 -A20 '^(--- FAIL|WARNING: DATA RACE|panic:)' "/tmp/site-agent-soak-$copy.log" | head -150
    fi
    grep -E '^(ok|FAIL|---)' "/tmp/site-agent-soak-$copy.log" | sed "s/^/copy $copy: /"
  done
  echo "soak took $(( $(date +%s) - soak_t0 )) s"
  if [ "$soak_failed" = 1 ]; then
    echo "the soak failed: a test flaked under load (logs: /tmp/site-agent-soak-{1,2}.log)" >&2
    exit 1
  fi
fi
if [ ${#e2e[@]} -gt 0 ]; then
  run=$(IFS='|'; echo "${e2e[*]}")
  log "end-to-end against real servers: $run ($(elapsed))"
  go test -count=1 -timeout 30m -run "$run" ./test/e2e/
fi
if [ "${CONTAINER:-1}" = 1 ]; then
  log "container image ($(elapsed))"
  ./scripts/container/test.sh
fi
if [ -n "$helm_pid" ]; then
  log "Helm chart ($(elapsed))"
  if ! wait "$helm_pid"; then
    tail -30 /tmp/site-agent-helm-build.log
    echo "scripts/helm/build.sh failed" >&2
    exit 1
  fi
  SITE_AGENT_HELM="$(tail -1 /tmp/site-agent-helm-build.log)" go test -count=1 -v -run 'Helm' ./test/deploy/ 2>&1 |
    grep -E '^(=== RUN|--- |    |PASS|FAIL|ok )'
fi
if [ "${VAULT:-1}" = 1 ]; then
  log "Vault ($(elapsed))"
  ./scripts/vault/test.sh
fi
log "done in $(elapsed)"
