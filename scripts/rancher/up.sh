#!/usr/bin/env bash
# Starts a real Rancher v2.12.0 on loopback for the real-Rancher tests: Debian's etcd, the
# kube-apiserver and kube-controller-manager built with Rancher (scripts/rancher/build.sh), and
# Rancher itself in external-Kubernetes mode; waits until the `local` cluster is active (≈30 s)
# and writes ${SITE_AGENT_RANCHER_STATE:-/var/tmp/site-agent-rancher}/env, which the tests read
# (internal/testenv/rancherenv). Idempotent: with the server up it returns at once. Stop with
# down.sh. The binaries come from SITE_AGENT_RANCHER_BIN or scripts/rancher/build.sh.
#
# What is real and what is not (docs/rancher.md): the norman /v3 and steve /v1 APIs, the
# /k8s/clusters/local proxy, local-provider auth, Rancher's project, quota and RBAC controllers
# with real quota accounting. Not here: the rancher-webhook, fleet, charts, node drivers, external
# identity providers (group principal ids are stored as given), and no pod ever runs.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$HERE/lib.sh"
PW=${CATTLE_BOOTSTRAP_PASSWORD:-site-agent-bootstrap-$(hostname | md5sum | cut -c1-12)}

pki() {
	local d=$STATE/pki
	[ -s "$d/tokens.csv" ] || (
		mkdir -p "$d" && chmod 700 "$d"
		cd "$d"
		ossl() { openssl "$@" >/dev/null 2>&1; }
		ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.crt -days 3650 -subj /CN=kube-ca
		ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout apiserver.key -out apiserver.csr -subj /CN=kube-apiserver
		printf "subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\n" >san.ext
		ossl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt -days 3650 -extfile san.ext
		ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout fp-ca.key -out fp-ca.crt -days 3650 -subj /CN=front-proxy-ca
		ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout fp.key -out fp.csr -subj /CN=front-proxy-client
		ossl x509 -req -in fp.csr -CA fp-ca.crt -CAkey fp-ca.key -CAcreateserial -out fp.crt -days 3650
		ossl genrsa -out sa.key 2048
		ossl rsa -in sa.key -pubout -out sa.pub
		echo "$(openssl rand -hex 24),admin,admin,\"system:masters\"" >tokens.csv
	)
	# Written at every start: the ports may have changed since the PKI was made.
	cat >"$STATE/kubeconfig" <<K
apiVersion: v1
kind: Config
clusters: [{name: k, cluster: {server: "https://127.0.0.1:$KUBE_PORT", certificate-authority: "$d/ca.crt"}}]
users: [{name: admin, user: {token: "$(kube_token)"}}]
contexts: [{name: k, context: {cluster: k, user: admin}}]
current-context: k
K
}

kube_token() { cut -d, -f1 "$STATE/pki/tokens.csv"; }

# spawn NAME CMD...: starts CMD in its own process group, logging to $STATE/log/NAME.log.
spawn() {
	local name=$1
	shift
	setsid "$@" >"$STATE/log/$name.log" 2>&1 </dev/null 9>&- &
	echo $! >"$STATE/run/$name.pid"
}

# wait_for WHAT SECONDS NAME CMD...: polls CMD until it succeeds; fails when NAME died or time is up.
wait_for() {
	local what=$1 limit=$2 name=$3 t0=$SECONDS
	shift 3
	until "$@" >/dev/null 2>&1; do
		alive "$name" || { tail -20 "$STATE/log/$name.log" >&2; die "$name exited while waiting for $what"; }
		[ $((SECONDS - t0)) -lt "$limit" ] || { tail -20 "$STATE/log/$name.log" >&2; die "no $what after $limit s"; }
		sleep 0.3
	done
}

start_kube() {
	local p=$STATE/pki
	spawn etcd etcd --name=default --data-dir="$STATE/etcd" \
		--listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
		--listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-cluster="default=http://127.0.0.1:$ETCD_PEER_PORT" --heartbeat-interval=10 --election-timeout=100 \
		--logger=zap --log-outputs=stderr --log-level=warn
	wait_for "etcd health" 30 etcd curl -fs "http://127.0.0.1:$ETCD_PORT/health"
	# Rancher's aggregated ext.cattle.io API needs the front-proxy flags and aggregator routing.
	spawn kube-apiserver "$BIN/kube-apiserver" --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
		--bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$KUBE_PORT" \
		--tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" --client-ca-file="$p/ca.crt" \
		--token-auth-file="$p/tokens.csv" --authorization-mode=Node,RBAC \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
		--service-cluster-ip-range=10.0.0.0/24 --profiling=false --endpoint-reconciler-type=none \
		--requestheader-client-ca-file="$p/fp-ca.crt" --requestheader-allowed-names=front-proxy-client \
		--requestheader-extra-headers-prefix=X-Remote-Extra- --requestheader-group-headers=X-Remote-Group \
		--requestheader-username-headers=X-Remote-User --proxy-client-cert-file="$p/fp.crt" \
		--proxy-client-key-file="$p/fp.key" --enable-aggregator-routing=true
	wait_for "kube-apiserver /readyz" 120 kube-apiserver curl -fs --cacert "$p/ca.crt" \
		-H "Authorization: Bearer $(kube_token)" "https://127.0.0.1:$KUBE_PORT/readyz"
	spawn kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig="$STATE/kubeconfig" \
		--controllers=resourcequota,serviceaccount,serviceaccount-token,namespace,garbagecollector \
		--service-account-private-key-file="$p/sa.key" --root-ca-file="$p/ca.crt" --leader-elect=false \
		--bind-address=127.0.0.1 --secure-port=0 --resource-quota-sync-period=2s
}

login() {
	curl -sfk -m 10 -H 'Content-Type: application/json' \
		-d "{\"username\":\"admin\",\"password\":\"$PW\",\"responseType\":\"json\"}" \
		"https://127.0.0.1:$HTTPS_PORT/v3-public/localProviders/local?action=login" |
		sed -n 's/.*"token":"\([^"]*\)".*/\1/p' | grep . >"$STATE/secrets/admin.token.tmp" &&
		mv "$STATE/secrets/admin.token.tmp" "$STATE/secrets/admin.token"
}

local_active() { answers; }

# admin_attributes: the admin's UserAttribute holds its extras (username, principal id) and no
# refresh is pending, twice 5 s apart; when they are missing it logs in again. Rancher's proxy
# makes the admin's impersonation role in an imported cluster from these extras (rancher v2.12.0
# pkg/impersonation getUser), while the admin's requests carry extras even when they are missing
# there (pkg/auth/requests/authenticate.go getUserExtraInfo): without them every
# /k8s/clusters/<id> request of the admin is forbidden ("cannot impersonate-on:user-info"). Right
# after a start they go missing: a provider refresh that read the attribute before the first
# login updates it on conflict with its own, empty, extras (pkg/controllers/management/auth/
# user_attribute_handler.go, which its comment calls "inherently racey").
admin_attributes() {
	local id ua
	id=$(curl -sk -m 5 -H "Authorization: Bearer $(admin_token)" "https://127.0.0.1:$HTTPS_PORT/v3/users?me=true" |
		grep -o '"id":"user-[a-z0-9]*"' | head -1 | cut -d'"' -f4)
	[ -n "$id" ] || return 1
	read_ua() {
		curl -s -m 5 --cacert "$STATE/pki/ca.crt" -H "Authorization: Bearer $(kube_token)" \
			"https://127.0.0.1:$KUBE_PORT/apis/management.cattle.io/v3/userattributes/$id" | tr -d ' \n'
	}
	ua=$(read_ua)
	case "$ua" in *'"NeedsRefresh":true'*) return 1 ;; esac
	case "$ua" in *'"principalid"'*) ;; *) login && return 1 ;; esac
	sleep 5
	ua=$(read_ua)
	case "$ua" in *'"NeedsRefresh":true'*) return 1 ;; *'"principalid"'*) return 0 ;; esac
	return 1
}

start_rancher() {
	mkdir -p "$STATE/rancher"
	# CATTLE_DEV_MODE: without it Rancher execs /usr/bin/jailer.sh. The imperative API cannot
	# register (no Endpoints off loopback), so its registration timeout is made very long.
	(cd "$STATE/rancher" && spawn rancher env KUBECONFIG="$STATE/kubeconfig" CATTLE_DEV_MODE=1 \
		CATTLE_BOOTSTRAP_PASSWORD="$PW" CATTLE_SERVER_URL="https://127.0.0.1:$HTTPS_PORT" IMPERATIVE_API_DIRECT=true \
		IMPERATIVE_API_APP_SELECTOR=rancher "$BIN/rancher" --http-listen-port="$HTTP_PORT" --https-listen-port="$HTTPS_PORT" \
		--k8s-mode=external --add-local=true --no-cacerts --profile-listen-address="" \
		--aggregation-registration-timeout=87600h)
	wait_for "Rancher /ping" 300 rancher sh -c "[ \"\$(curl -sk -m 3 -o /dev/null -w '%{http_code}' https://127.0.0.1:$HTTPS_PORT/ping)\" = 200 ]"
	wait_for "admin login" 120 rancher login
	wait_for "the local cluster active" 300 rancher local_active
	wait_for "the admin's user attributes" 120 rancher admin_attributes
	drop_ext_apiservice
}

# apiservice_code: the HTTP status of GET (or, with -X DELETE, of deleting) the APIService
# v1.ext.cattle.io.
apiservice_code() {
	curl -s -o /dev/null -w '%{http_code}' --cacert "$STATE/pki/ca.crt" -H "Authorization: Bearer $(kube_token)" "$@" \
		"https://127.0.0.1:$KUBE_PORT/apis/apiregistration.k8s.io/v1/apiservices/v1.ext.cattle.io"
}

# drop_ext_apiservice: without its imperative API Rancher's APIService v1.ext.cattle.io stays
# unavailable and the namespace controller never finishes deleting a namespace (stale discovery:
# NamespaceDeletionDiscoveryFailure). Removing it lets deletions complete; Rancher does not make
# it again while its certificate does not change. Rancher creates it (pkg/ext/certs.go
# ApiServiceCertListener) around the time `local` turns active, sometimes after: a single
# DELETE then found nothing and namespaces hung in Terminating. So this waits for it (up to
# 120 s), deletes it, and checks it stays gone for 10 s.
drop_ext_apiservice() {
	local t0=$SECONDS seen=false absent=0
	while [ $((SECONDS - t0)) -lt 120 ]; do
		if [ "$(apiservice_code)" = 200 ]; then
			apiservice_code -X DELETE >/dev/null
			seen=true absent=0
			log "deleted the APIService v1.ext.cattle.io (no imperative API here)"
		else
			absent=$((absent + 1))
			$seen && [ "$absent" -ge 20 ] && return 0
		fi
		sleep 0.5
	done
	$seen || log "WARNING: Rancher made no APIService v1.ext.cattle.io in 120 s; namespace deletion may hang"
}

write_env() {
	cat >"$STATE/env.tmp" <<ENV
export RANCHER_URL=https://127.0.0.1:$HTTPS_PORT
export RANCHER_ADMIN_TOKEN_FILE=$STATE/secrets/admin.token
export RANCHER_KUBECONFIG=$STATE/kubeconfig
export RANCHER_KUBE_URL=https://127.0.0.1:$KUBE_PORT
export RANCHER_KUBE_CA=$STATE/pki/ca.crt
export RANCHER_KUBE_VERSION=$(cat "$BIN/.kube-version" 2>/dev/null)
export RANCHER_STATE=$STATE
ENV
	mv "$STATE/env.tmp" "$STATE/env"
}

mkdir -p "$STATE"
exec 9>"$STATE/.lock"
flock -w 900 9 || die "another up.sh/down.sh holds $STATE/.lock"
if alive rancher && answers && [ -s "$STATE/env" ]; then
	[ "$(apiservice_code)" != 200 ] || { apiservice_code -X DELETE >/dev/null; log "deleted the APIService v1.ext.cattle.io again"; }
	wait_for "the admin's user attributes" 120 rancher admin_attributes
	log "already up"
	exit 0
fi
command -v etcd >/dev/null || die "etcd is missing: apt-get install -y --no-install-recommends etcd-server (scripts/kube/build.sh does it as root)"
BIN=${SITE_AGENT_RANCHER_BIN:-$("$HERE/build.sh" | tail -1)}
for b in rancher kube-apiserver kube-controller-manager; do [ -x "$BIN/$b" ] || die "$BIN/$b is missing"; done
t0=$SECONDS
stop_all # a half-started earlier run
rm -rf "$STATE/etcd" "$STATE/rancher" "$STATE/log"
mkdir -p "$STATE"/{run,log,secrets}
chmod 700 "$STATE/secrets"
pki
start_kube
start_rancher
write_env
log "up in $((SECONDS - t0)) s: https://127.0.0.1:$HTTPS_PORT (env: $STATE/env)"
