#!/usr/bin/python3
"""Idempotent post-start setup for scripts/openstack/up.sh (stdlib only).

Commands:
  catalog           service project, service users (admin role), services and
                    endpoints for compute, network, volumev3 and placement
  external-network  flat external network "public" with subnet 203.0.113.0/24
  check             authenticated GET against every API in the catalog

Reads the admin and service passwords from $SITE_AGENT_OS_STATE/secrets.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request

STATE = os.environ.get("SITE_AGENT_OS_STATE", "/var/tmp/site-agent-openstack")
KEYSTONE = "http://127.0.0.1:5000/v3"
REGION = "RegionOne"
SERVICE_USERS = ("nova", "neutron", "cinder", "placement")
# type, name, url
ENDPOINTS = (
    ("compute", "nova", "http://127.0.0.1:8774/v2.1"),
    ("network", "neutron", "http://127.0.0.1:9696"),
    ("volumev3", "cinderv3", "http://127.0.0.1:8776/v3/%(project_id)s"),
    ("placement", "placement", "http://127.0.0.1:8778"),
)
EXTERNAL = {"name": "public", "physnet": "extnet", "cidr": "203.0.113.0/24",
            "gateway": "203.0.113.1", "pool": ("203.0.113.10", "203.0.113.250")}


def secret(name):
    with open(os.path.join(STATE, "secrets", name)) as f:
        return f.read().strip()


class Client:
    def __init__(self):
        body = {"auth": {
            "identity": {"methods": ["password"], "password": {"user": {
                "name": "admin", "domain": {"id": "default"}, "password": secret("admin")}}},
            "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}}
        headers, data = self.request("POST", KEYSTONE + "/auth/tokens", body, token=None)
        self.token = headers["X-Subject-Token"]
        self.project_id = data["token"]["project"]["id"]

    def request(self, method, url, body=None, token="self", ok=(200, 201, 202, 204)):
        req = urllib.request.Request(url, method=method)
        req.add_header("Accept", "application/json")
        if token == "self":
            req.add_header("X-Auth-Token", self.token)
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            req.add_header("Content-Type", "application/json")
        for attempt in range(5):
            try:
                with urllib.request.urlopen(req, payload, timeout=60) as resp:
                    raw = resp.read()
                    return resp.headers, (json.loads(raw) if raw else None)
            except urllib.error.HTTPError as e:
                if e.code in ok:
                    return e.headers, None
                if e.code in (502, 503) and attempt < 4:
                    time.sleep(2)
                    continue
                raise SystemExit(f"{method} {url}: HTTP {e.code}: {e.read()[:500]!r}")
            except (ConnectionError, urllib.error.URLError) as e:
                if attempt < 4:
                    time.sleep(2)
                    continue
                raise SystemExit(f"{method} {url}: {e}")

    def get(self, path, base=KEYSTONE):
        return self.request("GET", base + path)[1]

    def post(self, path, body, base=KEYSTONE):
        return self.request("POST", base + path, body)[1]

    def ensure(self, path, key, query, create, base=KEYSTONE):
        """Returns the id of the first object matching query, creating it if absent."""
        found = self.get(f"{path}?{query}", base)[key + "s"]
        if found:
            return found[0]["id"]
        print(f"create {key} {query}")
        return self.post(path, {key: create}, base)[key]["id"]


def catalog(c):
    project = c.ensure("/projects", "project", "name=service&domain_id=default",
                       {"name": "service", "domain_id": "default",
                        "description": "OpenStack service users"})
    roles = {r["name"]: r["id"] for r in c.get("/roles")["roles"]}
    for name in SERVICE_USERS:
        uid = c.ensure("/users", "user", f"name={name}&domain_id=default",
                       {"name": name, "domain_id": "default", "password": secret("service")})
        # Keep the password in step with the state dir's secret.
        c.request("PATCH", f"{KEYSTONE}/users/{uid}", {"user": {"password": secret("service")}})
        for role in ("admin", "service"):
            if role in roles:
                c.request("PUT", f"{KEYSTONE}/projects/{project}/users/{uid}/roles/{roles[role]}")
    for stype, name, url in ENDPOINTS:
        sid = c.ensure("/services", "service", f"type={stype}",
                       {"type": stype, "name": name, "enabled": True})
        have = {e["interface"]: e for e in c.get(f"/endpoints?service_id={sid}")["endpoints"]}
        for iface in ("public", "internal", "admin"):
            ep = have.get(iface)
            if ep and ep["url"] == url and ep.get("region_id") == REGION:
                continue
            if ep:
                c.request("DELETE", f"{KEYSTONE}/endpoints/{ep['id']}")
            print(f"create endpoint {stype} {iface} {url}")
            c.post("/endpoints", {"endpoint": {"service_id": sid, "interface": iface,
                                               "url": url, "region_id": REGION}})


def external_network(c):
    base = "http://127.0.0.1:9696/v2.0"
    e = EXTERNAL
    net = c.ensure("/networks", "network", f"name={e['name']}", {
        "name": e["name"], "router:external": True, "shared": False,
        "provider:network_type": "flat", "provider:physical_network": e["physnet"]}, base)
    c.ensure("/subnets", "subnet", f"network_id={net}", {
        "name": e["name"] + "-subnet", "network_id": net, "ip_version": 4,
        "cidr": e["cidr"], "gateway_ip": e["gateway"], "enable_dhcp": False,
        "allocation_pools": [{"start": e["pool"][0], "end": e["pool"][1]}]}, base)
    got = c.get(f"/networks/{net}", base)["network"]
    if not got.get("router:external"):
        raise SystemExit(f"network {e['name']} is not router:external")
    print(f"external network {e['name']} id {net}")


def check(c):
    pid = c.project_id
    probes = {
        "compute": f"/os-quota-sets/{pid}/detail",
        "network": f"/v2.0/quotas/{pid}/details.json",
        "volumev3": f"/os-quota-sets/{pid}?usage=true",
        "placement": "/resource_providers",
        "identity": "/projects",
    }
    for entry in c.get("/auth/catalog")["catalog"]:
        probe = probes.get(entry["type"])
        url = next(e["url"] for e in entry["endpoints"] if e["interface"] == "public")
        if probe is None:
            continue
        t0 = time.monotonic()
        c.request("GET", url.rstrip("/") + probe)
        print(f"ok {entry['type']:10s} GET {probe} {1000 * (time.monotonic() - t0):.0f} ms")
        probes.pop(entry["type"])
    if probes:
        raise SystemExit(f"missing from the catalog: {sorted(probes)}")


def main():
    commands = {"catalog": catalog, "external-network": external_network, "check": check}
    if len(sys.argv) != 2 or sys.argv[1] not in commands:
        raise SystemExit(f"usage: {sys.argv[0]} {{{'|'.join(commands)}}}")
    commands[sys.argv[1]](Client())


if __name__ == "__main__":
    main()
