// Package openstacksim is a strict, stateful, in-memory simulator of the subset of OpenStack
// APIs the openstack backend calls: Keystone v3 (password tokens with a catalog pointing back
// at the simulator, domains, projects with tags, users, roles, role assignments), Nova quota
// sets, servers and server groups, Cinder quota sets, volumes, snapshots and backups, Neutron
// quotas, networks, subnets, routers and their interfaces, ports, security groups and rules, and
// floating IPs, Glance images and Octavia load balancers (either can be left out of the
// catalog, as in clouds without them). It is an http.Handler for tests and benchmarks.
//
// For the rke2 backend it also boots Nova servers (boot.go, servers.go): flavors, key pairs,
// POST /servers with block_device_mapping_v2 (image→volume and blank→volume, the volumes then
// visible in Cinder and deleted with the server when delete_on_termination), networks by uuid
// (a port is made) or by a port created beforehand, security groups, metadata, tags (from
// microversion 2.52; the tags list filter from 2.26), base64 user data; BUILD turns ACTIVE after
// Options.BuildDelay, FailServers sends a named server to ERROR. As on real Nova (checked
// against it, see scripts/openstack/up.sh --compute), a port made beforehand is bound to its
// server (device_id) only once the server is built, the server shows no addresses until then,
// and with Options.DeleteDelay a deleted server stays listed with task state "deleting" for a
// while. Floating IPs can be created on a port, bound or not, when its subnet is routed to the
// external network. Servers, Volumes, FloatingIPs and
// Keypairs show what tests need (user data decoded).
//
// Like the real services it requires a valid X-Auth-Token, rejects unknown paths, unknown
// query filters and unknown body attributes with 400, counts usage from the objects it holds,
// refuses objects over quota (409) and quota limits below usage where Nova (without force)
// and Cinder do, and refuses to delete objects still in use (an attached volume or one with
// snapshots, a backup with incremental children, a protected image, a load balancer with
// listeners unless cascaded). Deletions can be made asynchronous (SetAsyncDeletes) to show
// objects lingering in their deleting state. It can inject faults (5xx, 429, connection resets
// before or after applying a request) and counts calls per operation.
//
// It must not be used by product code, and it simulates behaviour, not performance.
package openstacksim
