// Package openstacksim is a strict, stateful, in-memory simulator of the subset of OpenStack
// APIs the openstack backend calls: Keystone v3 (password tokens with a catalog pointing back
// at the simulator, domains, projects with tags, users, roles, role assignments), Nova quota
// sets, servers and server groups, Cinder quota sets, volumes, snapshots and backups, Neutron
// quotas, networks, subnets, routers and their interfaces, ports, security groups and rules, and
// floating IPs, Glance images and Octavia load balancers (either can be left out of the
// catalog, as in clouds without them). It is an http.Handler for tests and benchmarks.
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
