package rancher

import (
	"testing"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/backendtest"
)

// The shared conformance suite against the Rancher simulator in front of a real
// kube-apiserver, with and without Keycloak.
func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name string
		kc   bool
	}{{"keycloak off", false}, {"keycloak on", true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, fixtureOpts{kube: true, keycloak: tc.kc})
			if tc.kc {
				f.kc.AddUser("alice")
				f.kc.AddUser("bob")
			}
			backendtest.Run(t, backendtest.Options{
				New:      func(t *testing.T) backends.Backend { return f.backend(nil) },
				Resource: f.resource,
				Members:  []string{"alice", "bob"},
			})
			if len(f.rs.Projects()) != 0 {
				t.Errorf("projects left after the suite:\n%s", f.rs)
			}
		})
	}
}
