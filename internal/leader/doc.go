// Package leader keeps several replicas of the agent from working at once: each replica campaigns
// for a Kubernetes Lease and only the holder runs the agent. A leader
// that cannot renew its lease cancels the work at once — no grace period, nothing in flight goes
// on writing — and campaigns again; a leader asked to stop finishes its work, then releases the
// lease so a standby takes over within one retry period instead of a lease duration.
//
// The elector is ours, on a coordination/v1-only REST client (internal/kubeapi), rather than
// client-go's tools/leaderelection, whose resource locks link the whole generated clientset
// (about 7 MiB of idle memory at every start). It keeps client-go's rules: optimistic writes by
// resourceVersion, expiry judged on this replica's clock from when it saw the record change,
// renewals every retry period, the work fenced when no renewal succeeded for the renew deadline
// (before anyone else can judge the lease expired) or at once when another holder is seen. Every
// request, the acquiring one included, is bounded by the renew deadline, and the fence clock of a
// new term starts when its winning attempt began, not when the (possibly late) answer arrived.
//
// It talks to the Kubernetes API only (coordination.k8s.io Leases); it must not import the modes
// or anything that reaches Waldur or a backend.
package leader
