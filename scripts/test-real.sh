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
# The servers are prepared in the background; then the tests run in four lanes at once, each on
# servers the others do not disturb (logs: /tmp/site-agent-lane-NAME.log, printed as each ends):
#   kube      the kube-apiserver packages (rancher, rancherkccrd, argocd, leader, vclusters),
#             cloud-init, the node emulator and the bootstrap scripts;
#   world     the rke2 world's end-to-end tests (simulated Nova);
#   broker    RabbitMQ's end-to-end tests first (they restart the broker Nova uses), testenv,
#             stomp, the other end-to-end tests, container, Helm, Vault, packages, the soak;
#   openstack OpenStack's and Nova's packages one at a time, then their end-to-end tests.
# Rancher runs when the first three have ended, beside the end of the openstack lane.
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
# Background jobs: start_job NAME CMD... runs CMD (a function or a script, under set -e) in the
# background and records its exit status in $jobs/NAME.rc; await NAME [LOG] waits for it and,
# when it failed, prints the end of LOG and returns its status. Lanes are jobs too, so a lane
# (a subshell) can wait for a job the main shell started.
jobs=$(mktemp -d /tmp/site-agent-real.XXXXXX)
start_job() {
  local name=$1
  shift
  touch "$jobs/$name.started"
  (
    rc=0
    "$@" &
    wait $! || rc=$?
    echo "$rc" >"$jobs/$name.rc"
  ) &
}
started() { [ -e "$jobs/$1.started" ]; }
await() {
  local name=$1 log=${2:-} rc
  while [ ! -e "$jobs/$name.rc" ]; do sleep 1; done
  rc=$(cat "$jobs/$name.rc")
  if [ "$rc" != 0 ] && [ -n "$log" ]; then
    tail -50 "$log"
    echo "$name failed (exit $rc; log: $log)" >&2
  fi
  return "$rc"
}
# Stops what is still running when the script ends early (a failed lane or step).
kill_tree() {
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
on_exit() {
  local status=$?
  [ "${rancher_started:-0}" != 1 ] || ./scripts/rancher/down.sh || true
  if [ "$status" != 0 ]; then
    for pid in $(jobs -p); do kill_tree "$pid"; done
  fi
  rm -rf "$jobs"
}
trap on_exit EXIT

if [ "${RKE2WORLD:-1}" = 1 ]; then
  # The vaultserver compiles (≈7 min cold, sharing the build cache with scripts/vault/test.sh)
  # while Kubernetes compiles; curl installs meanwhile.
  log "building the vaultserver and installing the sandbox's curl in the background (logs: /tmp/site-agent-vault-server.log, /tmp/site-agent-sandbox-install.log)"
  start_job vaultserver sh -c './scripts/vault/server.sh >/tmp/site-agent-vault-server.log 2>&1'
  start_job sandbox sh -c './scripts/sandbox/install.sh >/tmp/site-agent-sandbox-install.log 2>&1'
fi
# Chromium: installing Debian's package needs root; once installed a normal user runs it.
if [ -z "${CHROMIUM:-}" ] && [ "$(id -u)" != 0 ] && [ "${CI:-}" != true ] && ! command -v chromium >/dev/null; then
  echo "NOTICE: not root and chromium is not installed: skipping the status page screenshot test; run as root or set CHROMIUM=1" >&2
  CHROMIUM=0
fi
install_chromium() {
  . scripts/lib/apt.sh
  { apt_get install -y --no-install-recommends chromium ||
    { apt_get update && apt_get install -y --no-install-recommends chromium; }; } >/tmp/site-agent-chromium.log 2>&1
}
if [ "${CHROMIUM:-1}" = 1 ]; then
  if command -v chromium >/dev/null; then
    start_job chromium true
  else
    log "installing Chromium in the background (log: /tmp/site-agent-chromium.log)"
    start_job chromium install_chromium
  fi
fi
if [ "${DEB:-1}" = 1 ]; then
  # nfpm and cyclonedx-gomod compile (or are found in the cache) while the servers start.
  log "building the release tools in the background (log: /tmp/site-agent-release-tools.log)"
  start_job release_tools sh -c './scripts/release/tools.sh >/tmp/site-agent-release-tools.log 2>&1'
fi
if [ "${HELM:-1}" = 1 ]; then
  # Helm compiles while Kubernetes compiles (or its cached binaries are checked): both are Go
  # builds, and the second core would otherwise idle during the link steps and downloads.
  log "building Helm in the background (log: /tmp/site-agent-helm-build.log)"
  start_job helm sh -c './scripts/helm/build.sh >/tmp/site-agent-helm-build.log 2>&1'
fi
if [ "${RANCHER:-1}" = 1 ]; then
  # Cached: a check of the stamp; else a clone and a long Go build, alongside the others.
  log "building Rancher in the background (log: /tmp/site-agent-rancher-build.log)"
  start_job rancher sh -c './scripts/rancher/build.sh >/tmp/site-agent-rancher-build.log 2>&1'
fi
[ "${OPENSTACK:-1}" = 1 ] || COMPUTE=0
os_flags=()
[ "${COMPUTE:-1}" = 0 ] || os_flags=(--compute)
if [ "${OPENSTACK:-1}" = 1 ]; then
  # apt and database syncs are mostly waiting: let them run while Kubernetes compiles.
  log "starting OpenStack ${os_flags[*]} in the background (log: /tmp/site-agent-openstack-up.log)"
  start_job openstack sh -c "./scripts/openstack/up.sh ${os_flags[*]} >/tmp/site-agent-openstack-up.log 2>&1"
fi

# RabbitMQ: installing the package needs root; once installed a normal user can run it.
if [ -z "${RABBITMQ:-}" ] && [ "$(id -u)" != 0 ] && [ "${CI:-}" != true ] &&
	! dpkg-query -W -f '${Status}' rabbitmq-server 2>/dev/null | grep -q 'install ok installed'; then
  echo "NOTICE: not root and rabbitmq-server is not installed: skipping the real RabbitMQ tests; run as root or set RABBITMQ=1" >&2
  RABBITMQ=0
fi
if [ "${RABBITMQ:-1}" = 1 ]; then
  log "starting RabbitMQ in the background (log: /tmp/site-agent-rabbitmq-up.log)"
  start_job rabbitmq sh -c './scripts/rabbitmq/up.sh >/tmp/site-agent-rabbitmq-up.log 2>&1'
fi

# cloud-init: installing the package needs root; once installed a normal user can run it.
if [ -z "${CLOUDINIT:-}" ] && [ "$(id -u)" != 0 ] && [ "${CI:-}" != true ] && ! command -v cloud-init >/dev/null; then
  echo "NOTICE: not root and cloud-init is not installed: skipping the cloud-init schema test; run as root or set CLOUDINIT=1" >&2
  CLOUDINIT=0
fi
if [ "${CLOUDINIT:-1}" = 1 ]; then
  log "installing cloud-init in the background (log: /tmp/site-agent-cloudinit-install.log)"
  start_job cloudinit sh -c './scripts/cloudinit/install.sh >/tmp/site-agent-cloudinit-install.log 2>&1'
fi

if [ "${KUBE:-1}" = 1 ]; then
  log "Kubernetes control plane binaries ($(elapsed))"
  ./scripts/kube/build.sh
  log "KWOK, the virtual clusters' kubelet stand-in ($(elapsed))"
  SITE_AGENT_KWOK_BIN="$(./scripts/kwok/build.sh | tail -1)"
  export SITE_AGENT_KWOK_BIN
fi

# Rancher has its own step at the end, so that its controllers use no CPU while the other
# servers' tests run. Until then SITE_AGENT_RANCHER=0 makes the real-Rancher tests skip
# (./internal/vclusters/... holds one).
export SITE_AGENT_RANCHER=0
# The test processes allocate much and live short: collect garbage less often (the machine has
# memory to spare; tier 2 is bound by its 2 cores).
export GOGC="${GOGC:-400}"

# The tests run in four lanes at once, each a sequence of steps on servers no other lane
# disturbs: two cores are kept busy by one lane's CPU while another waits on a server (OpenStack
# is mostly Python latency). A lane's output goes to /tmp/site-agent-lane-NAME.log and is
# printed when the lane ends.
lane_kube() {
  log "go test (a real kube-apiserver): rancher, rancherkccrd, argocd, leader, vclusters ($(elapsed))"
  go test -race -count=1 -p 1 -timeout 30m ./internal/backends/rancher/... ./internal/backends/rancherkccrd/ \
    ./internal/backends/rke2/argocd/ ./internal/leader/... ./internal/vclusters/...
  if started cloudinit; then
    await cloudinit /tmp/site-agent-cloudinit-install.log
    log "rke2 user data against cloud-init's schema ($(elapsed))"
    go test -count=1 -run 'TestCloudInitSchemaReal' ./internal/backends/rke2/
  fi
  if started sandbox; then
    await sandbox /tmp/site-agent-sandbox-install.log
    log "the node emulator against a real kube-apiserver and etcd; rke2 bootstrap scripts run for real ($(elapsed))"
    go test -race -count=1 -p 1 -timeout 20m ./internal/sim/nodeemu/...
    go test -count=1 -run 'ScriptReal' ./internal/backends/rke2/
  fi
}
lane_world() {
  await sandbox /tmp/site-agent-sandbox-install.log
  await vaultserver /tmp/site-agent-vault-server.log
  SITE_AGENT_VAULT_SERVER="$(tail -1 /tmp/site-agent-vault-server.log)"
  export SITE_AGENT_VAULT_SERVER
  log "end-to-end: the rke2 world (real scripts, Vault, etcd and Nodes; simulated Nova) ($(elapsed))"
  go test -count=1 -timeout 30m -run 'RKE2' -skip 'RealNova' ./test/e2e/
}
lane_broker() {
  if started rabbitmq; then
    await rabbitmq /tmp/site-agent-rabbitmq-up.log
    tail -2 /tmp/site-agent-rabbitmq-up.log
    # First: these restart the broker, which Nova and Cinder use too (the openstack lane waits).
    log "end-to-end against a real RabbitMQ ($(elapsed))"
    go test -count=1 -timeout 30m -run 'RealRabbitMQ' ./test/e2e/
  fi
  touch "$jobs/rabbitmq_settled"
  # testenv/osenv runs in the openstack lane, beside the tests that restart neutron-server.
  log "go test: the test environments ($(elapsed))"
  go test -race -count=1 -p 1 -timeout 30m ./internal/testenv/ ./internal/testenv/kubeenv/...
  if started rabbitmq; then
    log "go test (a real RabbitMQ): stomp ($(elapsed))"
    go test -race -count=1 -p 1 -timeout 30m ./internal/stomp/...
  fi
  local e2e=()
  [ "${KUBE:-1}" != 1 ] || e2e+=(Rancher RancherKcCrd LeaderElection)
  if started chromium; then
    await chromium /tmp/site-agent-chromium.log
    e2e+=(RealChromium)
  fi
  if [ ${#e2e[@]} -gt 0 ]; then
    local run
    run=$(IFS='|'; echo "${e2e[*]}")
    log "end-to-end against real servers: $run ($(elapsed))"
    go test -count=1 -timeout 30m -run "$run" -skip 'RKE2|RealNova' ./test/e2e/
  fi
  if [ "${CONTAINER:-1}" = 1 ]; then
    log "container image ($(elapsed))"
    ./scripts/container/test.sh
  fi
  if started helm; then
    await helm /tmp/site-agent-helm-build.log
    log "Helm chart ($(elapsed))"
    SITE_AGENT_HELM="$(tail -1 /tmp/site-agent-helm-build.log)" go test -count=1 -v -run 'Helm' ./test/deploy/ 2>&1 |
      grep -E '^(=== RUN|--- |    |PASS|FAIL|ok )'
  fi
  if [ "${VAULT:-1}" = 1 ]; then
    log "Vault ($(elapsed))"
    ./scripts/vault/test.sh
  fi
  if started release_tools; then
    await release_tools /tmp/site-agent-release-tools.log
    log "packages ($(elapsed))"
    ./scripts/release/test-deb.sh
  fi
  if [ "${SOAK:-1}" = 1 ]; then soak; fi
}
soak() {
  local soak=(./internal/vclusters/tunnel/) soak_count="${SOAK_COUNT:-3}" soak_t0 copy failed=0
  [ "${KUBE:-1}" != 1 ] || soak+=(./internal/leader/)
  ! started rabbitmq || soak+=(./internal/stomp/)
  log "soak: ${soak[*]} -count=$soak_count, two copies at once ($(elapsed))"
  soak_t0=$(date +%s)
  go test -race -count=1 -run '^$' "${soak[@]}" >/dev/null # build once, then run twice at once
  for copy in 1 2; do
    start_job "soak$copy" sh -c "go test -race -count=$soak_count -p 1 -timeout 30m ${soak[*]} >/tmp/site-agent-soak-$copy.log 2>&1"
  done
  for copy in 1 2; do
    if ! await "soak$copy"; then
      failed=1
      grep -E -B2 -A20 '^(--- FAIL|WARNING: DATA RACE|panic:)' "/tmp/site-agent-soak-$copy.log" | head -150
    fi
    grep -E '^(ok|FAIL|---)' "/tmp/site-agent-soak-$copy.log" | sed "s/^/copy $copy: /"
  done
  echo "soak took $(($(date +%s) - soak_t0)) s"
  if [ "$failed" = 1 ]; then
    echo "the soak failed: a test flaked under load (logs: /tmp/site-agent-soak-{1,2}.log)" >&2
    return 1
  fi
}
lane_openstack() {
  await openstack /tmp/site-agent-openstack-up.log
  tail -3 /tmp/site-agent-openstack-up.log
  # Nova and Cinder use the broker the broker lane restarts first.
  while [ ! -e "$jobs/rabbitmq_settled" ]; do sleep 1; done
  local packages=(./internal/testenv/osenv/... ./internal/backends/openstack/...) run='OpenStack'
  if [ "${COMPUTE:-1}" = 1 ]; then
    packages+=(./internal/backends/rke2/novainfra/...)
    run='OpenStack|RealNova'
  fi
  # -p 1 and one lane: neutron cannot take concurrent creators here (router creates time out),
  # and the OpenStack crash test restarts neutron-server.
  log "go test (real OpenStack): ${packages[*]} ($(elapsed))"
  go test -race -count=1 -p 1 -timeout 30m "${packages[@]}"
  if started vaultserver; then
    await vaultserver /tmp/site-agent-vault-server.log
    SITE_AGENT_VAULT_SERVER="$(tail -1 /tmp/site-agent-vault-server.log)"
    export SITE_AGENT_VAULT_SERVER
  fi
  log "end-to-end against real OpenStack: $run ($(elapsed))"
  go test -count=1 -timeout 30m -run "$run" ./test/e2e/
}
run_lane() {
  exec >"/tmp/site-agent-lane-$1.log" 2>&1
  "lane_$1"
}
start_lane() { start_job "lane_$1" run_lane "$1"; }
# end_lanes NAME...: waits for the lanes started among NAME..., printing each lane's log as it
# ends; when one fails, the others are stopped (their logs so far printed) and the script fails.
end_lanes() {
  local pending=() next name
  for name in "$@"; do ! started "lane_$name" || pending+=("$name"); done
  while [ ${#pending[@]} -gt 0 ]; do
    next=()
    for name in "${pending[@]}"; do
      if [ ! -e "$jobs/lane_$name.rc" ]; then
        next+=("$name")
        continue
      fi
      log "lane $name ended ($(elapsed)); its log (/tmp/site-agent-lane-$name.log):"
      cat "/tmp/site-agent-lane-$name.log"
      if [ "$(cat "$jobs/lane_$name.rc")" != 0 ]; then
        for other in "${pending[@]}"; do
          [ "$other" = "$name" ] || [ -e "$jobs/lane_$other.rc" ] || {
            log "lane $other stopped unfinished; the end of its log:"
            tail -40 "/tmp/site-agent-lane-$other.log"
          }
        done
        echo "lane $name failed (log: /tmp/site-agent-lane-$name.log)" >&2
        exit 1
      fi
    done
    pending=(${next[@]+"${next[@]}"})
    [ ${#pending[@]} -eq 0 ] || sleep 2
  done
}

[ "${KUBE:-1}" != 1 ] || start_lane kube
! { started vaultserver && started sandbox; } || start_lane world
start_lane broker
! started openstack || start_lane openstack
log "lanes started: kube, world (rke2), broker (RabbitMQ, testenv, e2e, container, Helm, Vault, packages, soak), openstack; logs: /tmp/site-agent-lane-*.log ($(elapsed))"
end_lanes kube world broker

# Rancher: its own step, beside the end of the openstack lane (SITE_AGENT_RANCHER=0 above).
rancher_notice=""
if started rancher; then
  log "waiting for the Rancher build ($(elapsed))"
  rc=0
  await rancher || rc=$?
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
    [ "$rancher_was_up" = 1 ] || rancher_started=1
    SITE_AGENT_RANCHER_BIN="$(tail -1 /tmp/site-agent-rancher-build.log)" ./scripts/rancher/up.sh
    log "real Rancher: the rke2 port and the rancher backend's binary against it ($(elapsed))"
    SITE_AGENT_RANCHER=1 go test -race -count=1 -p 1 -timeout 20m ./internal/backends/rke2/assembly/
    SITE_AGENT_RANCHER=1 go test -count=1 -timeout 20m -run 'RealRancher' ./test/e2e/
    log "real Rancher: virtual clusters imported and active in it ($(elapsed))"
    SITE_AGENT_RANCHER=1 go test -race -count=1 -timeout 10m -run '^TestRealRancher' ./internal/vclusters/
    [ "$rancher_was_up" = 1 ] || ./scripts/rancher/down.sh
    rancher_started=0
  fi
fi
end_lanes openstack
[ -z "$rancher_notice" ] || printf '\n%s\n' "$rancher_notice" >&2
log "done in $(elapsed)"
