// Package novainfra implements rke2.Infra (and rke2.FlavorSource) on OpenStack with
// gophercloud v2, on the connection, retrying HTTP client, error classification and Neutron
// chain shared with the openstack backend (internal/clients/openstack).
//
// With backend_settings.openstack.tenant: shared every cluster lives in the tenant the
// connection is scoped to (project_name); with per_cluster each cluster has its own project,
// rke2-<resource uuid> in project_domain_name, tagged site-agent-rke2 and rke2-cluster=<uuid>,
// found by name before it is made (the shared tenant package), with the tenant maxima as Nova
// cores/ram and Cinder gigabytes quotas (the other quotas raised to the largest order's needs)
// and tenant_role granted to the connection's user; the cluster's objects are then made with
// a token scoped to that project (Nova boots servers and their volumes in the token's
// project), and TearDown deletes the emptied project last. The objects are named after the
// cluster so that every step finds what an interrupted pass made before making it again:
//
//	network   rke2-<name>-<uuid>            subnet  rke2-<name>-<uuid>
//	router    rke2-<name>-<uuid>            group   rke2-<name>-<uuid> (Kubernetes ports)
//	port      <node name>, description rke2-cluster=<uuid>
//	key pair  rke2-<uuid>-<sha256(public key)[:8]>
//	floating IP description rke2-cluster=<uuid> node=<node name>
//
// A node boots from a volume made from the image (boot index 0) with one blank volume per
// data volume, all deleted with the server; on a port made beforehand in the cluster network
// (carrying the cluster's and the order's security groups), with the inventory as metadata
// and tags (compute microversion 2.52; site-agent:rke2-volumes records how many volumes) and
// the cloud-init as user data. CreateServer adopts a live server of the same name and tag
// instead of booting a second one; RepairNode confirms a port Nova's listing does not show and
// makes a missing floating IP on the node's port (secgroup.go: the group's rules follow the
// settings, missing ones made in one bulk request).
//
// What cannot change within an order is looked up once per process: the network chain
// EnsureNetwork ensured, for 10 minutes (chains.go; a failed CreateServer or RepairNode and a
// teardown forget it), and flavors and the image resolved by name, for a minute (lookups.go;
// the diagnostics always look afresh).
//
// What real Nova does (real_test.go runs against it, scripts/openstack/up.sh --compute): the
// pre-made port is bound to the server only when the compute host builds it, so the floating
// IP goes onto the port found by name and a server deleted while building has its unbound
// port deleted here; a deleted server stays listed, task state "deleting", for about a second,
// during which Servers leaves it out and TearDown answers failure.ErrNotReady.
package novainfra
