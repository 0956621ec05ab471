#!/usr/bin/python3
"""Idempotent post-start setup for scripts/openstack/up.sh (stdlib only).

Commands:
  catalog [--image] service project, the "service" role, service users (admin and
                    service roles), services and endpoints for compute, network,
                    volumev3 and placement (--image: and Glance, for up.sh --compute)
  external-network  flat external network "public" with subnet 203.0.113.0/24
  compute IMAGE     for real servers (up.sh --compute): flavors m1.tiny..m1.xlarge, a
                    1 KiB raw image named IMAGE, the admin project's quotas raised
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
SERVICE_USERS = ("nova", "neutron", "cinder", "placement", "glance")
# type, name, url
ENDPOINTS = (
    ("compute", "nova", "http://127.0.0.1:8774/v2.1"),
    ("network", "neutron", "http://127.0.0.1:9696"),
    ("volumev3", "cinderv3", "http://127.0.0.1:8776/v3/%(project_id)s"),
    ("placement", "placement", "http://127.0.0.1:8778"),
)
IMAGE_ENDPOINT = ("image", "glance", "http://127.0.0.1:9292")
NOVA = "http://127.0.0.1:8774/v2.1"
GLANCE = "http://127.0.0.1:9292"
# name, vCPUs, RAM MB, disk GB: the usual m1 flavors (openstacksim's DefaultFlavors too)
FLAVORS = (("m1.tiny", 1, 512, 1), ("m1.small", 1, 2048, 20), ("m1.medium", 2, 4096, 40),
           ("m1.large", 4, 8192, 80), ("m1.xlarge", 8, 16384, 160))
# The admin project hosts the rke2 clusters of the tests (boot volumes of 64 GB, up to ten
# servers a cluster, a router, network and security group each); Nova's fake driver reports
# 1000 vCPUs and 800 GB of RAM.
ADMIN_QUOTAS = (
    (NOVA + "/os-quota-sets/{p}", "quota_set",
     {"instances": 200, "cores": 1000, "ram": 2048000, "key_pairs": 200, "metadata_items": 128}),
    ("http://127.0.0.1:8776/v3/{p}/os-quota-sets/{p}", "quota_set",
     {"volumes": 500, "gigabytes": 100000, "per_volume_gigabytes": -1}),
    ("http://127.0.0.1:9696/v2.0/quotas/{p}", "quota",
     {"network": 200, "subnet": 200, "router": 100, "port": 2000, "floatingip": 200,
      "security_group": 200, "security_group_rule": 2000}),
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

    def request(self, method, url, body=None, token="self", ok=(200, 201, 202, 204), raw=None):
        req = urllib.request.Request(url, method=method)
        req.add_header("Accept", "application/json")
        if token == "self":
            req.add_header("X-Auth-Token", self.token)
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            req.add_header("Content-Type", "application/json")
        elif raw is not None:
            payload = raw
            req.add_header("Content-Type", "application/octet-stream")
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

    def password_works(self, user_id, password):
        """Whether Keystone issues an unscoped token for the user with this password."""
        body = {"auth": {"identity": {"methods": ["password"], "password": {
            "user": {"id": user_id, "password": password}}}}}
        req = urllib.request.Request(KEYSTONE + "/auth/tokens", json.dumps(body).encode(), method="POST")
        req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                return resp.status == 201
        except urllib.error.HTTPError as e:
            if e.code == 401:
                return False
            raise SystemExit(f"POST {KEYSTONE}/auth/tokens: HTTP {e.code}")

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


def catalog(c, *flags):
    if set(flags) - {"--image"}:
        raise SystemExit(f"catalog: unknown flags {flags}")
    project = c.ensure("/projects", "project", "name=service&domain_id=default",
                       {"name": "service", "domain_id": "default",
                        "description": "OpenStack service users"})
    # Every API requires the "service" role on the service token that comes with a user's
    # token (service_token_roles_required = true): without it Nova's calls to Neutron and
    # Cinder are refused (401, or 409 on a volume detach).
    c.ensure("/roles", "role", "name=service", {"name": "service"})
    roles = {r["name"]: r["id"] for r in c.get("/roles")["roles"]}
    for name in SERVICE_USERS:
        uid = c.ensure("/users", "user", f"name={name}&domain_id=default",
                       {"name": name, "domain_id": "default", "password": secret("service")})
        # Keep the password in step with the state dir's secret. Only when it differs: a
        # password change revokes every token of the user, and services that hold one
        # (nova-compute's service token for Cinder) fail with 401 until restarted.
        if not c.password_works(uid, secret("service")):
            c.request("PATCH", f"{KEYSTONE}/users/{uid}", {"user": {"password": secret("service")}})
        for role in ("admin", "service"):
            if role in roles:
                c.request("PUT", f"{KEYSTONE}/projects/{project}/users/{uid}/roles/{roles[role]}")
    for stype, name, url in ENDPOINTS + ((IMAGE_ENDPOINT,) if flags else ()):
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


def compute(c, image_name):
    have = {f["name"] for f in c.get("/flavors/detail", NOVA)["flavors"]}
    for name, vcpus, ram, disk in FLAVORS:
        if name not in have:
            print(f"create flavor {name}")
            c.post("/flavors", {"flavor": {"name": name, "vcpus": vcpus, "ram": ram, "disk": disk,
                                           "os-flavor-access:is_public": True}}, NOVA)
    found = c.get(f"/v2/images?name={image_name}", GLANCE)["images"]
    for im in found:
        if im["status"] != "active":  # an upload cut short
            c.request("DELETE", f"{GLANCE}/v2/images/{im['id']}")
    if not [im for im in found if im["status"] == "active"]:
        print(f"create image {image_name}")
        im = c.post("/v2/images", {"name": image_name, "disk_format": "raw", "container_format": "bare",
                                   "visibility": "public"}, GLANCE)
        c.request("PUT", f"{GLANCE}/v2/images/{im['id']}/file", raw=bytes(1024))
    for url, key, values in ADMIN_QUOTAS:
        c.request("PUT", url.format(p=c.project_id), {key: values})


def check(c):
    pid = c.project_id
    probes = {
        "compute": f"/os-quota-sets/{pid}/detail",
        "network": f"/v2.0/quotas/{pid}/details.json",
        "volumev3": f"/os-quota-sets/{pid}?usage=true",
        "placement": "/resource_providers",
        "identity": "/projects",
        "image": "/v2/images",
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
    probes.pop("image", None)  # only with up.sh --compute
    if probes:
        raise SystemExit(f"missing from the catalog: {sorted(probes)}")


def main():
    commands = {"catalog": catalog, "external-network": external_network, "compute": compute, "check": check}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        raise SystemExit(f"usage: {sys.argv[0]} {{{'|'.join(commands)}}} [ARGS]")
    commands[sys.argv[1]](Client(), *sys.argv[2:])


if __name__ == "__main__":
    main()
