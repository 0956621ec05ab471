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
#   - cloud-init: every rendered rke2 user data through Debian's `cloud-init schema`
#     (scripts/cloudinit/install.sh; root to install);
#   - the rke2 world (issue 17 items 6–9): each emulated VM's rendered bootstrap script run by
#     /bin/sh in a chroot sandbox with the real curl and sed (scripts/sandbox/install.sh; root),
#     against a real Vault core served by test/vault's vaultserver (scripts/vault/server.sh,
#     built in the background and cached), real etcd members per server (Debian's etcd, from
#     scripts/kube/build.sh) and Nodes with Leases in the kube-apiserver — the RKE2 e2e tests
#     and the nodeemu, ranchersim and rke2 script tests;
#   - packages: `make release` for linux/amd64, the .deb installed with dpkg, checked and
#     purged, the .rpm's metadata and the SBOM checked (scripts/release/test-deb.sh; root), with
#     nfpm and cyclonedx-gomod built from the module proxy and cached (scripts/release/tools.sh);
#   - Chromium: Debian's headless Chromium renders the built agent's /status page to a PNG and a
#     DOM, checked by test/e2e (installing the package needs root);
#   - Rancher: a real Rancher v2.12.0 built from its source (scripts/rancher/build.sh, cached)
#     and started on loopback (scripts/rancher/up.sh; down.sh after its tests) for the rancher
#     backend, the rke2 backend's Rancher port, their diagnostics and virtual clusters imported
#     into it (site-agent-vclusters, which needs KWOK from the KUBE part). The Rancher module is not on
#     the module proxy: without its source (RANCHER_SRC, the cache, or github.com) these tests
#     are skipped with a loud notice saying how to provide it, and the run stays green;
#   - a soak: the tunnel, leader and stomp packages SOAK_COUNT times each (default 3; use 20
#     before landing a new concurrent test), two copies at once under -race (their
#     timing-sensitive tests must not flake under load); SOAK=0 leaves it out.
# Tests run with SITE_AGENT_REQUIRE_REAL=1: a missing server fails instead of skipping.
# OPENSTACK=0 / KUBE=0 / VAULT=0 / CONTAINER=0 / HELM=0 / RABBITMQ=0 / DEB=0 / CLOUDINIT=0 / CHROMIUM=0 /
# RKE2WORLD=0 / RANCHER=0 leave a part out (e.g. on a machine without root). HELM, RANCHER and RKE2WORLD
# need KUBE (etcd); RKE2WORLD needs VAULT (without it the RealNova tests keep the simulated Vault,
# scripts and etcd: SITE_AGENT_RKE2_WORLD=sim). COMPUTE=0 leaves out real Nova servers (OpenStack
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
if [ -z "${DEB:-}" ] && [ "$(id -u)" != 0 ] && [ "${CI:-}" != true ]; then
  echo "NOTICE: not root: skipping the package test (it installs the .deb with dpkg); run as root or set DEB=1" >&2
  DEB=0
fi
[ "${KUBE:-1}" = 1 ] || { HELM=0; RANCHER=0; }
if [ "${RKE2WORLD:-1}" = 1 ] && { [ "${KUBE:-1}" != 1 ] || [ "${VAULT:-1}" != 1 ]; }; then
  echo "NOTICE: KUBE=0 or VAULT=0: skipping the real rke2 world (scripts, Vault, etcd and Nodes stay emulated)" >&2
  RKE2WORLD=0
fi
if [ -z "${RKE2WORLD:-}" ] && [ "$(id -u)" != 0 ] && [ "${CI:-}" != true ] && ! command -v curl >/dev/null; then
  echo "NOTICE: not root and curl is not installed: skipping the real rke2 world; run as root or set RKE2WORLD=1" >&2
  RKE2WORLD=0
fi
[ "${RKE2WORLD:-1}" = 1 ] || export SITE_AGENT_RKE2_WORLD=sim
vaultsrv_pid="" sandbox_pid=""
if [ "${RKE2WORLD:-1}" = 1 ]; then
  # The vaultserver compiles (≈7 min cold, sharing the build cache with scripts/vault/test.sh)
  # while Kubernetes compiles; curl installs meanwhile.
  log "building the vaultserver and installing the sandbox's curl in the background (logs: /tmp/site-agent-vault-server.log, /tmp/site-agent-sandbox-install.log)"
  ./scripts/vault/server.sh >/tmp/site-agent-vault-server.log 2>&1 &
  vaultsrv_pid=$!
  ./scripts/sandbox/install.sh >/tmp/site-agent-sandbox-install.log 2>&1 &
  sandbox_pid=$!
fi
# Chromium: installing Debian's package needs root; once installed a normal user runs it.
if [ -z "${CHROMIUM:-}" ] && [ "$(id -u)" != 0 ] && [ "${CI:-}" != true ] && ! command -v chromium >/dev/null; then
  echo "NOTICE: not root and chromium is not installed: skipping the status page screenshot test; run as root or set CHROMIUM=1" >&2
  CHROMIUM=0
fi
chromium_pid=""
if [ "${CHROMIUM:-1}" = 1 ] && ! command -v chromium >/dev/null; then
  log "installing Chromium in the background (log: /tmp/site-agent-chromium.log)"
  (. scripts/lib/apt.sh && { apt_get install -y --no-install-recommends chromium ||
    { apt_get update && apt_get install -y --no-install-recommends chromium; }; }) >/tmp/site-agent-chromium.log 2>&1 &
  chromium_pid=$!
fi
release_tools_pid=""
if [ "${DEB:-1}" = 1 ]; then
  # nfpm and cyclonedx-gomod compile (or are found in the cache) while the servers start.
  log "building the release tools in the background (log: /tmp/site-agent-release-tools.log)"
  ./scripts/release/tools.sh >/tmp/site-agent-release-tools.log 2>&1 &
  release_tools_pid=$!
fi
helm_pid=""
if [ "${HELM:-1}" = 1 ]; then
  # Helm compiles while Kubernetes compiles (or its cached binaries are checked): both are Go
  # builds, and the second core would otherwise idle during the link steps and downloads.
  log "building Helm in the background (log: /tmp/site-agent-helm-build.log)"
  ./scripts/helm/build.sh >/tmp/site-agent-helm-build.log 2>&1 &
  helm_pid=$!
fi
rancher_pid=""
if [ "${RANCHER:-1}" = 1 ]; then
  # Cached: a check of the stamp; else a clone and a long Go build, alongside the others.
  log "building Rancher in the background (log: /tmp/site-agent-rancher-build.log)"
  ./scripts/rancher/build.sh >/tmp/site-agent-rancher-build.log 2>&1 &
  rancher_pid=$!
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

# cloud-init: installing the package needs root; once installed a normal user can run it.
if [ -z "${CLOUDINIT:-}" ] && [ "$(id -u)" != 0 ] && [ "${CI:-}" != true ] && ! command -v cloud-init >/dev/null; then
  echo "NOTICE: not root and cloud-init is not installed: skipping the cloud-init schema test; run as root or set CLOUDINIT=1" >&2
  CLOUDINIT=0
fi
cloudinit_pid=""
if [ "${CLOUDINIT:-1}" = 1 ]; then
  log "installing cloud-init in the background (log: /tmp/site-agent-cloudinit-install.log)"
  ./scripts/cloudinit/install.sh >/tmp/site-agent-cloudinit-install.log 2>&1 &
  cloudinit_pid=$!
fi

packages=(./internal/testenv/...)
e2e=()
if [ "${KUBE:-1}" = 1 ]; then
  log "Kubernetes control plane binaries ($(elapsed))"
  ./scripts/kube/build.sh
  log "KWOK, the virtual clusters' kubelet stand-in ($(elapsed))"
  SITE_AGENT_KWOK_BIN="$(./scripts/kwok/build.sh | tail -1)"
  export SITE_AGENT_KWOK_BIN
  packages+=(./internal/backends/rancher/... ./internal/backends/rancherkccrd/ ./internal/backends/rke2/argocd/ ./internal/leader/... ./internal/vclusters/...)
  e2e+=(Rancher RancherKcCrd LeaderElection)
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
  packages+=(./internal/stomp/...)
  e2e+=(RealRabbitMQ)
fi

if [ "${CHROMIUM:-1}" = 1 ]; then
  if [ -n "$chromium_pid" ] && ! wait "$chromium_pid"; then
    tail -30 /tmp/site-agent-chromium.log
    echo "installing chromium failed" >&2
    exit 1
  fi
  e2e+=(RealChromium)
fi

if [ -n "$sandbox_pid" ]; then
  if ! wait "$sandbox_pid"; then
    tail -30 /tmp/site-agent-sandbox-install.log
    echo "scripts/sandbox/install.sh failed" >&2
    exit 1
  fi
  packages+=(./internal/sim/nodeemu/...)
fi

# Rancher has its own step below, so that its controllers use no CPU while the other servers'
# tests and the soak run. Outside it SITE_AGENT_RANCHER=0 makes the real-Rancher tests skip
# (./internal/vclusters/... holds one).
export SITE_AGENT_RANCHER=0
log "go test (real servers) ${packages[*]} ($(elapsed))"
# -p 1: the OpenStack crash test restarts neutron-server, which other packages also use
go test -race -count=1 -p 1 -timeout 30m "${packages[@]}"
if [ -n "$cloudinit_pid" ]; then
  log "rke2 user data against cloud-init's schema ($(elapsed))"
  if ! wait "$cloudinit_pid"; then
    tail -30 /tmp/site-agent-cloudinit-install.log
    echo "scripts/cloudinit/install.sh failed" >&2
    exit 1
  fi
  go test -count=1 -run 'TestCloudInitSchemaReal' ./internal/backends/rke2/
fi
# Rancher: its own step (SITE_AGENT_RANCHER=0 exported above).
rancher_notice=""
if [ -n "$rancher_pid" ]; then
  log "waiting for the Rancher build ($(elapsed))"
  rc=0
  wait "$rancher_pid" || rc=$?
  if [ "$rc" = 3 ]; then
    # No source: the build printed how to provide it. Skip loudly, never red.
    rancher_notice="NOTICE: the real-Rancher tests were SKIPPED: no Rancher ${RANCHER_VERSION:-v2.12.0} source.
  Provide it with RANCHER_SRC=/path/to/a/checkout/of/rancher/rancher (tag v2.12.0), or unpack it
  into ${SITE_AGENT_CACHE:-$HOME/.cache/site-agent}/rancher/src/${RANCHER_VERSION:-v2.12.0}, or let this machine reach github.com."
    cat /tmp/site-agent-rancher-build.log >&2
    echo "$rancher_notice" >&2
  elif [ "$rc" != 0 ]; then
    tail -50 /tmp/site-agent-rancher-build.log
    echo "scripts/rancher/build.sh failed" >&2
    exit 1
  else
    # A Rancher already running (up.sh by hand, for make bench-vclusters-rancher) is left running.
    rancher_was_up=0
    (. scripts/rancher/lib.sh && alive rancher && answers) && rancher_was_up=1
    log "real Rancher: starting it, unless it runs ($(elapsed))"
    [ "$rancher_was_up" = 1 ] || trap './scripts/rancher/down.sh || true' EXIT
    SITE_AGENT_RANCHER_BIN="$(tail -1 /tmp/site-agent-rancher-build.log)" ./scripts/rancher/up.sh
    log "real Rancher: the rke2 port and the rancher backend's binary against it ($(elapsed))"
    SITE_AGENT_RANCHER=1 go test -race -count=1 -p 1 -timeout 20m ./internal/backends/rke2/assembly/
    SITE_AGENT_RANCHER=1 go test -count=1 -timeout 20m -run 'RealRancher' ./test/e2e/
    log "real Rancher: virtual clusters imported and active in it ($(elapsed))"
    SITE_AGENT_RANCHER=1 go test -race -count=1 -timeout 10m -run '^TestRealRancher' ./internal/vclusters/
    [ "$rancher_was_up" = 1 ] || ./scripts/rancher/down.sh
    trap - EXIT
  fi
fi
if [ "${SOAK:-1}" = 1 ]; then
  soak=(./internal/vclusters/tunnel/)
  [ "${KUBE:-1}" = 1 ] && soak+=(./internal/leader/)
  [ -n "$rmq_pid" ] && soak+=(./internal/stomp/)
  soak_count="${SOAK_COUNT:-3}"
  log "soak: ${soak[*]} -count=$soak_count, two copies at once ($(elapsed))"
  soak_t0=$(date +%s)
  go test -race -count=1 -run '^$' "${soak[@]}" >/dev/null # build once, then run twice at once
  pids=()
  for copy in 1 2; do
    nice -n 5 go test -race -count="$soak_count" -p 1 -timeout 30m "${soak[@]}" >"/tmp/site-agent-soak-$copy.log" 2>&1 &
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
if [ -n "$vaultsrv_pid" ]; then
  log "rke2 bootstrap scripts run for real ($(elapsed))"
  go test -count=1 -run 'ScriptReal' ./internal/backends/rke2/
  log "waiting for the vaultserver ($(elapsed))"
  if ! wait "$vaultsrv_pid"; then
    tail -30 /tmp/site-agent-vault-server.log
    echo "scripts/vault/server.sh failed" >&2
    exit 1
  fi
  export SITE_AGENT_VAULT_SERVER
  SITE_AGENT_VAULT_SERVER="$(tail -1 /tmp/site-agent-vault-server.log)"
  e2e+=(RKE2)
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
if [ -n "$release_tools_pid" ]; then
  log "packages ($(elapsed))"
  if ! wait "$release_tools_pid"; then
    tail -30 /tmp/site-agent-release-tools.log
    echo "scripts/release/tools.sh failed" >&2
    exit 1
  fi
  ./scripts/release/test-deb.sh
fi
[ -z "$rancher_notice" ] || printf '\n%s\n' "$rancher_notice" >&2
log "done in $(elapsed)"
