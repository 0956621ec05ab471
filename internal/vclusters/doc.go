// Package vclusters is the site-agent-vclusters program (cmd/site-agent-vclusters): a load-generating tool (seed 004) that
// runs many lightweight "virtual" Kubernetes clusters inside one main API server and imports
// each into Rancher, connected over Rancher's own remotedialer tunnels, so that Rancher — and
// site-agent's rancher backend, which drives it — can be exercised against hundreds of clusters
// that really connect.
//
// A virtual cluster is a namespace cluster-<name> with Node objects made from a template (their
// status capacity and allocatable patched after create, as no kubelet reports them) and Pods
// bound to those Nodes, an in-process API proxy on a loopback port (apiproxy), Rancher's import
// manifest applied into its namespace, and the agent and steve sessions a real cattle cluster
// agent opens (tunnel). An HTTP API creates, lists and deletes them; a state file lets a
// restarted tool pick them up again, recreating what is missing; a deletion watcher follows
// clusters deleted in Rancher; a drift loop re-patches Node status.
//
// Layout: config.go/load.go (settings, exit 2 on bad input before any network call),
// manager.go (the cluster registry and its API operations), cluster.go (one cluster's
// lifecycle: setup, proxy, status), connect.go (tunnel events), tenant.go and template.go (the
// main API server's objects), manifest.go (the import manifest scoped to a tenant), creds.go
// (the agent's credentials), rancher.go (the shared Rancher client, internal/clients/rancher), watch.go (state saver, deletion
// watcher, drift loop), api.go, metrics.go, command.go (the program's command line), logbridge.go
// (remotedialer's logrus output into zap).
//
// It is a test instrument with a program of its own, never linked into the release binary of the
// agent (cmd/site-agent/deps_test.go); it must not import the simulators (internal/sim) and it
// shares no state with the agent's modes.
package vclusters
