#!/usr/bin/env bash
# Tier 2 (scripts/test-real.sh, DEB=0 leaves it out): builds the linux/amd64 release with
# `make release` into a temporary directory, installs the .deb with dpkg as an operator would
# and checks what it put where (owners, modes, the user, the links, the conffile), that the
# installed binary runs (version, check-config as the site-agent user, systemd credentials, exit
# 2 on a bad file), that systemd-analyze accepts the units when it exists (systemd need not run)
# and that a Go abort under the unit's environment is not taken for exit status 2; then purges
# it and checks that only what Debian policy keeps (the system user) is left. It also checks
# the .rpm's metadata with Debian's rpm, the SBOM and SHA256SUMS, and `make install` into a
# DESTDIR. Needs root (dpkg -i); leaves the machine as it found it (but for Debian's rpm,
# installed when missing), and refuses to run where site-agent, its user or /etc/waldur exist.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:/usr/local/go/bin"
# shellcheck source=scripts/lib/apt.sh
. scripts/lib/apt.sh
log() { printf 'test-deb: %s\n' "$*" >&2; }
fail() {
	printf 'test-deb: FAIL: %s\n' "$*" >&2
	exit 1
}
[ "$(id -u)" = 0 ] || fail "needs root to install the package; run as root or leave it out with DEB=0"
t0=$(date +%s)
work=$(mktemp -d)
marker=/var/tmp/site-agent-test-deb.marker
agent_pid=""
cleanup() {
	[ -z "$agent_pid" ] || kill "$agent_pid" 2>/dev/null || true
	if [ -e "$marker" ]; then # this test installed the package on a machine without it or the user
		if dpkg-query -W -f '${Status}' site-agent 2>/dev/null | grep -q installed; then
			with_lock_wait dpkg --purge site-agent >/dev/null || true
		fi
		rm -f /etc/waldur/waldur-site-agent-config.yaml
		rmdir /etc/waldur 2>/dev/null || true
		userdel site-agent 2>/dev/null || true
		groupdel site-agent 2>/dev/null || true
		rm -f "$marker"
	fi
	rm -rf "$work"
}
trap cleanup EXIT

# A run that was killed leaves its marker: what it left (package, user) is the test's to remove.
# Without the marker an installed package or a user site-agent is someone's, and is kept.
if [ -e "$marker" ]; then
	log "removing what an interrupted run left"
	cleanup
	work=$(mktemp -d)
fi
if dpkg-query -W -f '${Status}' site-agent 2>/dev/null | grep -q installed || getent passwd site-agent >/dev/null || [ -e /etc/waldur ]; then
	fail "site-agent is installed here, or a user site-agent or /etc/waldur exists: this test installs, purges and removes them; run it on a machine without them"
fi

log "make release (linux/amd64) into $work/dist"
DIST="$work/dist" RELEASE_ARCHES=amd64 make -s release >"$work/release.log" 2>&1 || {
	tail -40 "$work/release.log"
	fail "make release"
}
t_release=$(($(date +%s) - t0))
version=$(make -s --no-print-directory print-VERSION)
shopt -s nullglob
debs=("$work"/dist/*_amd64.deb) rpms=("$work"/dist/*.x86_64.rpm) sboms=("$work"/dist/*_linux_amd64.cdx.json)
tars=("$work"/dist/*_linux_amd64.tar.gz)
[ ${#debs[@]} = 1 ] && [ ${#rpms[@]} = 1 ] && [ ${#sboms[@]} = 1 ] && [ ${#tars[@]} = 1 ] ||
	fail "dist/ should hold one .deb, .rpm, SBOM and tarball: $(ls "$work/dist")"
deb=${debs[0]} rpm=${rpms[0]} sbom=${sboms[0]}
(cd "$work/dist" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not match dist/"
[ "$(wc -l <"$work/dist/SHA256SUMS")" = 4 ] || fail "SHA256SUMS should cover the 4 artifacts"
mapfile -t names < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' scripts/release/incumbent-names)

# expect_stat PATH "MODE OWNER GROUP"
expect_stat() {
	local got
	got=$(stat -c '%a %U %G' "$1" 2>/dev/null) || fail "$1 is missing"
	[ "$got" = "$2" ] || fail "$1: $got, want $2"
}

log "dpkg -i $(basename "$deb")"
t1=$(date +%s)
touch "$marker"
with_lock_wait dpkg -i "$deb" >"$work/dpkg.log" 2>&1 || {
	cat "$work/dpkg.log"
	fail "dpkg -i"
}
dpkg-query -W -f '${Status}' site-agent | grep -q 'install ok installed' || fail "not installed"
mapfile -t owned < <(dpkg-query -L site-agent | grep -vx '/\.')

expect_stat /usr/bin/site-agent "755 root root"
expect_stat /etc/waldur "750 root site-agent"
expect_stat /etc/default/site-agent "644 root root"
expect_stat /usr/lib/systemd/system/site-agent.service "644 root root"
expect_stat /usr/lib/systemd/system/site-agent@.service "644 root root"
expect_stat /usr/lib/sysusers.d/site-agent.conf "644 root root"
for f in README.md migration.md examples/inmemory.yaml examples/rancher.yaml examples/openstack.yaml examples/rke2.yaml; do
	expect_stat "/usr/share/doc/site-agent/$f" "644 root root"
done
dpkg-query -W -f '${Conffiles}\n' site-agent | grep -q '^ /etc/default/site-agent ' || fail "/etc/default/site-agent is not a conffile"
for unit in site-agent.service site-agent@.service; do
	grep -q '^ExecStart=/usr/bin/site-agent ' "/usr/lib/systemd/system/$unit" || fail "$unit does not start /usr/bin/site-agent"
done
for name in "${names[@]}"; do
	[ -L "/usr/bin/$name" ] && [ "$(readlink "/usr/bin/$name")" = site-agent ] || fail "/usr/bin/$name is not a link to site-agent"
done

# The user and group: a system account as the sysusers.d file describes it.
IFS=: read -r _ _ uid gid gecos home shell < <(getent passwd site-agent) || fail "no user site-agent"
[ "$(getent group site-agent | cut -d: -f3)" = "$gid" ] || fail "site-agent's primary group is not site-agent"
[ "$uid" -lt 1000 ] || fail "site-agent is not a system user (uid $uid)"
[ "$home:$shell:$gecos" = "/var/lib/site-agent:/usr/sbin/nologin:Waldur site agent" ] ||
	fail "user site-agent: $home:$shell:$gecos, not as systemd/site-agent.sysusers.conf says"
[ ! -e /var/lib/site-agent ] || fail "the package created /var/lib/site-agent (systemd's StateDirectory= does)"
systemctl is-enabled site-agent.service >/dev/null 2>&1 && fail "the package enabled site-agent.service"

log "running the installed binary"
out=$(/usr/bin/site-agent version) || fail "site-agent version: $out"
[[ $out == *"$version"* ]] || fail "site-agent version printed '$out', want the stamped $version"
for f in inmemory rancher openstack rke2; do
	/usr/bin/site-agent check-config -c "/usr/share/doc/site-agent/examples/$f.yaml" >/dev/null ||
		fail "check-config rejects the installed example $f.yaml"
done
for name in "${names[@]}"; do # the binary is the command it is called by
	out=$("/usr/bin/$name" --help) && [[ $out == *"$name"* ]] || fail "/usr/bin/$name --help does not answer as $name: $out"
done
# The configuration where the units read it, readable by the agent's group only.
config=/etc/waldur/waldur-site-agent-config.yaml
install -m 0640 -o root -g site-agent /usr/share/doc/site-agent/examples/inmemory.yaml "$config"
runuser -u site-agent -- /usr/bin/site-agent check-config -c "$config" >/dev/null || fail "the user site-agent cannot read $config"
if runuser -u nobody -- /usr/bin/site-agent check-config -c "$config" >/dev/null 2>&1; then
	fail "another user can read $config"
fi
# Exit status 2 (the units' RestartPreventExitStatus) for an invalid file, naming the key.
printf 'log_level: LOUD\nofferings: []\n' >"$work/bad.yaml"
set +e
err=$(/usr/bin/site-agent check-config -c "$work/bad.yaml" 2>&1)
code=$?
set -e
[ "$code" = 2 ] && [[ $err == *log_level* ]] || fail "an invalid file: exit $code ($err), want 2 naming log_level"
# A systemd credential in place of the token (LoadCredential=waldur-token:…).
sed 's/waldur_api_token: .*/waldur_api_token: "credential:waldur-token"/' "$config" >"$work/cred.yaml"
set +e
err=$(env -u CREDENTIALS_DIRECTORY /usr/bin/site-agent check-config -c "$work/cred.yaml" 2>&1)
code=$?
set -e
[ "$code" = 2 ] && [[ $err == *waldur_api_token*CREDENTIALS_DIRECTORY* ]] ||
	fail "credential without \$CREDENTIALS_DIRECTORY: exit $code ($err), want 2 naming the key"
mkdir "$work/creds" && echo "token-from-a-credential" >"$work/creds/waldur-token"
CREDENTIALS_DIRECTORY="$work/creds" /usr/bin/site-agent check-config -c "$work/cred.yaml" >/dev/null ||
	fail "check-config with the credential"

if command -v systemd-analyze >/dev/null; then
	log "systemd-analyze verify"
	cp /usr/lib/systemd/system/site-agent@.service "$work/site-agent@order_process.service"
	for unit in /usr/lib/systemd/system/site-agent.service "$work/site-agent@order_process.service"; do
		# Other units on the machine may have problems of their own: only ours count.
		if systemd-analyze verify "$unit" 2>&1 | grep -E 'site-agent' | grep -v 'Failed to put bus name' >"$work/verify.log"; then
			cat "$work/verify.log"
			fail "systemd-analyze verify $(basename "$unit")"
		fi
	done
else
	log "NOTICE: no systemd-analyze: the units are not verified"
fi

# The watchdog aborts a wedged agent with SIGABRT, on which Go exits with status 2 — the
# status the units do not restart. Under the units' environment (GOTRACEBACK=crash) the
# process dies by the signal instead and is restarted.
abort_status() { # ENV...: runs the agent against a refusing Waldur, aborts it, prints its status
	sed -e 's#waldur_api_url: .*#waldur_api_url: "http://127.0.0.1:1/api/"#' -e '/^listen_address:/d' \
		-e "s#state_file: .*#state_file: $work/state.json#" "$config" >"$work/refusing.yaml"
	env "$@" SITE_AGENT_HEARTBEAT_FILE="$work/heartbeat" /usr/bin/site-agent -m order_process -c "$work/refusing.yaml" >"$work/agent.log" 2>&1 &
	agent_pid=$!
	sleep 1
	kill -0 "$agent_pid" 2>/dev/null || fail "the agent did not keep running: $(tail -5 "$work/agent.log")"
	kill -ABRT "$agent_pid"
	local status=0
	wait "$agent_pid" || status=$?
	agent_pid=""
	echo "$status"
}
unit_env=$(sed -n 's/^Environment=\(GOTRACEBACK=.*\)/\1/p' /usr/lib/systemd/system/site-agent.service)
[ "$(abort_status GOTRACEBACK=)" = 2 ] || fail "without GOTRACEBACK an aborted agent should exit 2 (Go's default)"
[ -n "$unit_env" ] && [ "$(abort_status "$unit_env")" = 134 ] ||
	fail "under the unit's environment ($unit_env) an aborted agent should die by SIGABRT, not exit 2"
t_install=$(($(date +%s) - t1))

log "dpkg --purge"
rm -f "$config"
with_lock_wait dpkg --purge site-agent >"$work/dpkg.log" 2>&1 || {
	cat "$work/dpkg.log"
	fail "dpkg --purge"
}
for path in "${owned[@]}"; do
	[ -e "$path" ] || [ -L "$path" ] || continue
	dpkg-query -S "$path" >/dev/null 2>&1 && continue # shared with another package (/usr/bin, …)
	fail "$path is left after the purge"
done
[ ! -e /etc/waldur ] || fail "/etc/waldur is left after the purge"
[ ! -e /var/lib/site-agent ] || fail "/var/lib/site-agent is left after the purge"
getent passwd site-agent >/dev/null || fail "the purge removed the user site-agent (Debian policy keeps system users)"

log "make install into a DESTDIR"
make -s install DESTDIR="$work/root" PREFIX=/usr >/dev/null
for name in "${names[@]}"; do
	[ "$(readlink -f "$work/root/usr/bin/$name")" = "$work/root/usr/bin/site-agent" ] || fail "make install: $name is not a link to site-agent"
done

log "the .rpm's metadata (Debian's rpm)"
command -v rpm >/dev/null || apt_get install -y -q --no-install-recommends rpm >/dev/null
rpm -K --nosignature "$rpm" >/dev/null || fail "rpm -K: digests do not match"
[ "$(rpm -qp --qf '%{NAME} %{ARCH}' "$rpm" 2>/dev/null)" = "site-agent x86_64" ] || fail "rpm name/arch"
listing=$(rpm -qp --qf '[%{FILEMODES:perms} %{FILEUSERNAME} %{FILEGROUPNAME} %{FILENAMES} %{FILELINKTOS}\n]' "$rpm" 2>/dev/null)
for want in "-rwxr-xr-x root root /usr/bin/site-agent" "drwxr-x--- root site-agent /etc/waldur" \
	"-rw-r--r-- root root /usr/lib/systemd/system/site-agent.service" "-rw-r--r-- root root /usr/lib/sysusers.d/site-agent.conf"; do
	grep -qxF -- "$want" <<<"$listing" || grep -qxF -- "$want " <<<"$listing" || fail "rpm lacks '$want':
$listing"
done
for name in "${names[@]}"; do
	grep -q "^l.* /usr/bin/$name site-agent$" <<<"$listing" || fail "rpm lacks the link $name"
done
rpm -qpc "$rpm" 2>/dev/null | grep -qx /etc/default/site-agent || fail "rpm: /etc/default/site-agent is not a config file"
rpm -qp --scripts "$rpm" 2>/dev/null | grep -q systemd-sysusers || fail "rpm: no user creation in the scripts"

log "the SBOM"
jq -e --arg v "$version" '
	.bomFormat == "CycloneDX" and (.specVersion | test("^1\\.[4-9]")) and
	.metadata.component.name == "github.com/waldur/site-agent" and .metadata.component.version == $v and
	(.metadata.component.purl | test("goarch=amd64")) and
	any(.components[]; .name == "go.uber.org/zap" and (.version | startswith("v1.")))' "$sbom" >/dev/null ||
	fail "the SBOM is not a CycloneDX document of the agent listing go.uber.org/zap"

log "ok: make release (amd64) ${t_release} s, install/checks ${t_install} s, total $(($(date +%s) - t0)) s"
