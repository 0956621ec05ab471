// Package leader keeps several replicas of the agent from working at once: each replica campaigns
// for a Kubernetes Lease (client-go leaderelection) and only the holder runs the agent. A leader
// that cannot renew its lease cancels the work at once — no grace period, nothing in flight goes
// on writing — and campaigns again; a leader asked to stop finishes its work, then releases the
// lease so a standby takes over within one retry period instead of a lease duration.
//
// It talks to the Kubernetes API only (coordination.k8s.io Leases); it must not import the modes
// or anything that reaches Waldur or a backend.
package leader
