// Package nodeemu plays the VMs of an rke2 cluster in tests: it reads a node's user data (the
// rke2 backend's built-in cloud-init), does what cloud-init's bootstrap script would — log in to
// Vault with the role id and single-use secret id, read the cluster token once — and joins an
// emulated RKE2 cluster that behaves like RKE2's supervisor: it refuses a joining node whose
// `server:` does not point at a live server of the cluster, a node with the wrong token, and a
// second initial server.
//
// A rancher-bootstrapped node registers with the Rancher simulator (RegisterWithRancher) as the
// system-agent install would. An rke2-bootstrapped node (Cluster.BootRKE2) also reads the import
// manifest URL and registries.yaml from Vault; a server fetches Rancher's import manifest, and
// once it is applied the cluster agent it deploys reports the cluster's Nodes (name, node-label
// labels, Ready) to the Rancher simulator after every join, stop or removal, so they appear as
// the imported cluster's v3 nodes. It is test support: product code must not import it.
package nodeemu
