package tunnel_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/vclusters/tunnel"
)

// handshakeFailures counts the handshake errors reported so far with the status and a body
// containing want.
func (w *world) handshakeFailures(status int, want string) int {
	return w.events.get(func(r *recorder) int {
		n := 0
		for _, err := range r.failed {
			var he *tunnel.HandshakeError
			if errors.As(err, &he) && he.Status == status && strings.Contains(he.Body, want) {
				n++
			}
		}
		return n
	})
}

func TestRefusedHandshakeIsReported(t *testing.T) {
	w := newWorld(t)
	c := tunnel.Start(context.Background(), w.config(nil))
	defer c.Stop()
	w.waitSessions(true, false)
	if !w.sim.DeleteCluster(w.id) {
		t.Fatal("delete")
	}
	waitFor(t, 5*time.Second, "a refused handshake", func() bool {
		return w.handshakeFailures(400, "cluster not found") > 0
	})
}

// Real Rancher can answer /v3/connect/register with an optimistic-lock conflict; the agent
// retries and registers.
func TestRegistrationConflictIsRetried(t *testing.T) {
	w := newWorld(t)
	w.sim.ConflictRegistrations(2)
	c := tunnel.Start(context.Background(), w.config(nil))
	defer c.Stop()
	w.waitSessions(true, false)
	conflicts := w.handshakeFailures(400, "the object has been modified")
	if connects := w.sim.TunnelConnects(); conflicts != 2 || connects["agent.register"] != 1 {
		t.Errorf("%d conflicts reported, handshakes %v: want 2, then one registration", conflicts, connects)
	}
}
