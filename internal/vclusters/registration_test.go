package vclusters

import (
	"testing"

	rancherapi "github.com/waldur/site-agent/internal/clients/rancher"
)

// Only a cluster Rancher keeps from becoming active for want of the agent's parameters gets a
// new handshake; an active one is left alone whatever its list entry shows.
func TestRegistrationLost(t *testing.T) {
	for _, tc := range []struct {
		state, endpoint string
		want            bool
	}{
		{"pending", "", true},
		{"waiting", "", true},
		{"unavailable", "", true},
		{"active", "", false},
		{"active", "https://10.0.0.1:6443", false},
		{"pending", "https://10.0.0.1:6443", false},
	} {
		got := registrationLost(rancherapi.Cluster{ID: "c-x", State: tc.state, APIEndpoint: tc.endpoint})
		if got != tc.want {
			t.Errorf("state %q, apiEndpoint %q: lost = %v, want %v", tc.state, tc.endpoint, got, tc.want)
		}
	}
}
