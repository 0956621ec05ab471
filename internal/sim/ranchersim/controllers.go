package ranchersim

import "time"

// What Rancher v2.12.0's controllers fill in a moment after an object is made (observed on the
// real server, issue 16; Options.ControllerDelay is that moment, default 50 ms):
//
//   - a provisioning cluster's status: the create answer has none, and status.clusterName (the
//     management cluster c-m-<8>) appears once pkg/controllers/provisioningv2/cluster has made
//     the management cluster (observed: ~1 s);
//   - a "default-token" registration token for that management cluster
//     (pkg/controllers/provisioningv2/cluster/controller.go, createToken), once the cluster's
//     namespace exists;
//   - a registration token's status beyond the token itself: manifestUrl, command,
//     insecureCommand, nodeCommand (pkg/controllers/dashboard/clusterregistrationtoken/
//     status.go, assignStatus). The create answer carries the token and none of these.

// settled reports whether Rancher's controllers have run on an object made at t.
func (s *Server) settled(t time.Time) bool { return time.Since(t) >= s.opts.ControllerDelay }

// defaultTokensLocked makes the default-token of every provisioning cluster whose management
// cluster and namespace exist (s.mu held).
func (s *Server) defaultTokensLocked() {
	for _, pc := range s.prov {
		c := s.st.clusters[pc.managedID]
		if c == nil || !s.settled(pc.created) || !pc.deleteAt.IsZero() ||
			(c.imp != nil && time.Since(c.imp.created) < s.opts.NamespaceDelay) {
			continue
		}
		id := pc.managedID + ":default-token"
		if s.tokens[id] == nil {
			s.tokens[id] = &Token{ID: id, Name: "default-token", ClusterID: pc.managedID, Token: newRegistrationToken(), Created: time.Now()}
		}
	}
}

// nodeCommands are a settled token's node commands, in pkg/controllers/dashboard/
// clusterregistrationtoken/status.go's formats (no CA checksum: the simulator's certificate is
// not Rancher's private CA).
func nodeCommands(base, token string) map[string]any {
	script := base + "/system-agent-install.sh"
	return map[string]any{
		"nodeCommand":         " curl -fL " + script + " | sudo  sh -s - --server " + base + " --label 'cattle.io/os=linux' --token " + token,
		"insecureNodeCommand": " curl --insecure -fL " + script + " | sudo  sh -s - --server " + base + " --label 'cattle.io/os=linux' --token " + token,
	}
}
