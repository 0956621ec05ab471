package modes

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends/inmemory"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// FuzzEventBodies hands arbitrary event bodies, of every object type, to the event mode as the
// broker delivers them (Waldur, or whoever can publish to the queue, writes them). Nothing may
// panic; a body that cannot be read is "malformed" (errMalformed) and costs no request to
// Waldur; every outcome is one of the four.
func FuzzEventBodies(f *testing.F) {
	for _, s := range []struct{ typ, body string }{
		{"order", `{"order_uuid":"0123456789abcdef0123456789abcdef","order_state":"pending-provider"}`},
		{"order", `{"order_uuid":"0123456789abcdef0123456789abcdef","order_state":"done"}`},
		{"order", `{"order_uuid":12}`},
		{"user_role", `{"project_uuid":"01234567-89ab-cdef-0123-456789abcdef","granted":true}`},
		{"resource", `{"resource_uuid":"../../admin"}`},
		{"service_account", `{"project_uuid":""}`},
		{"offering_user", `{"action":"update","attributes":["email"],"backend_ids":["x"]}`},
		{"offering_resources_sync", `{"resource_uuid":"0123456789abcdef0123456789abcdef"}`},
		{"unknown", `[]`},
		{"order", "\x00\xff not json"},
	} {
		f.Add(s.typ, []byte(s.body))
	}
	fl := newFlow(f, waldursim.Options{}, inmemory.Settings{})
	m, units := NewEventMode(fl.env, &Registrar{Env: fl.env, Started: time.Now()}, []EventOffering{{Offering: fl.unit.Offering,
		Waldur: fl.unit.Waldur, Orders: fl.unit.Backend, Membership: fl.unit.Backend, Log: fl.unit.Log}}, EventModeOptions{})
	u := units[0]
	eo := m.offerings[u]
	f.Fuzz(func(t *testing.T, typ string, body []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		before := fl.sim.TotalCalls()
		result, err := m.dispatch(ctx, eo, u, typ, body)
		eo.bg.Wait() // passes an event triggered
		switch result {
		case evMalformed:
			if !errors.Is(err, errMalformed) {
				t.Fatalf("%s %q: malformed without errMalformed: %v", typ, body, err)
			}
		case evDropped, evHandled, evFailed:
		default:
			t.Fatalf("%s %q: outcome %q", typ, body, result)
		}
		if result == evMalformed && fl.sim.TotalCalls() != before {
			t.Fatalf("%s %q was %s but cost %d request(s) to Waldur", typ, body, result, fl.sim.TotalCalls()-before)
		}
	})
}
