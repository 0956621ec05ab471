// Package rke2 is the foundation of the `rke2` backend: one Waldur resource is one Kubernetes
// cluster (RKE2) on OpenStack virtual machines, installed in stages and scaled without losing
// etcd quorum, registered with Rancher (seed 000 of the design documents, spec/rancher.md §5, and
// the staged install of seed 002).
//
// What this package holds today, each piece pure and complete:
//
//   - settings.go: the offering's backend_settings (the incumbent's managed_rancher_* keys,
//     k8s_version, base_image_name, private registry, Vault and Keycloak connection, bootstrap
//     rancher|rke2, the cloud-init template file), decoded strictly, defaulted and validated with
//     errors that name the key;
//   - spec.go: an order's attributes (managed mode: name, worker_nodes_*; self-managed mode:
//     nodes[] with role, flavor, volumes) and the resource limits turned into a ClusterSpec;
//   - evaluate.go: the pre-approval checks (backends.OrderEvaluator) — DNS-label name, 1, 3 or 5
//     servers, at least one agent, flavors meeting the per-role CPU/RAM minimums, totals within
//     the tenant maxima — rejecting with a reason a customer can read;
//   - planner.go: the staged install and scale planner, a pure function from desired counts and
//     observed nodes (inventory + Nova state + Rancher state) to the next actions;
//   - inventory.go: how the planner's inventory (role, initial|joining, stage, index, join
//     target) is written to OpenStack server metadata and tags and to Rancher node labels, so
//     the agent keeps no private database: every pass re-derives the plan from what it observes;
//   - observe.go: Nova servers and Rancher nodes joined by name into the planner's nodes, with
//     duplicate VMs of one node (a retried create) set aside for deletion and broken inventory
//     refused;
//   - vault.go: the cluster's Vault objects (policy, AppRole with single-use 60-minute secret
//     ids and tokens, the KV v2 token secret), per-node credentials, cleanup and the diagnostics
//     line, on the shared Vault client (clients/vault Admin); joinsecret.go: with bootstrap rke2
//     the secret holds the cluster's join token for its whole life (made once, check-and-set),
//     Rancher's import manifest URL and registries.yaml;
//   - cloudinit.go: the node's cloud-init, a template a site may replace (rendered by
//     nodetemplate, text/template's language without reflection), for both
//     bootstrap modes (Rancher system-agent or plain RKE2), each reading its token from Vault
//     with a single-use AppRole secret id;
//   - settings_network.go: the pod and service networks (cluster_cidr, service_cidr), refused
//     when they overlap each other or the nodes' subnet;
//   - shape.go: every pass checks each ACTIVE node's whole VM (volumes, port, floating IP)
//     before the cluster counts as ready, mending or replacing what is missing;
//   - adopt.go: a resource whose backend id was lost gets the cluster made for it back;
//   - clustermemo.go: a call that only waits takes the Rancher cluster an earlier call of the
//     process read, and a pass reads it afresh before it acts (issue 17 item 14: requests).
//
// Design rules the planner enforces (see docs/rke2.md): the initial server alone until it is
// ready; joining servers one at a time, each pointed at a ready server that is not being
// removed; agents only once every server is ready and the server count is reached; removals
// agents first, servers one at a time and only while every remaining server is ready; a VM in
// Nova ERROR is deleted and replaced; a node still joining through a server that has gone is
// replaced rather than left hanging.
//
// The package never sees Waldur types and never logs or returns a secret id, token or rendered
// user data in clear (UserData and secret.Secret print redacted); only ClusterVault talks to a
// server. The infrastructure (gophercloud, reusing the openstack backend's tenant code),
// Rancher v1 provisioning, the executor and the registry entry come next; docs/rke2.md lists
// them.
package rke2
