package openstacksim

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/waldur/site-agent/internal/sim/simfault"
)

// FaultKind is one kind of injected failure.
type FaultKind = simfault.Kind

// Faults configures random fault injection (see simfault.Config). Operations are operation
// names ("neutron POST /v2.0/routers"); empty means all but token requests.
type Faults = simfault.Config

// Fault kinds. Status faults and FaultReset never apply the request; FaultLoseResponse
// applies it and then resets the connection, so the client never learns the outcome.
const (
	Fault500          = simfault.Status500
	Fault502          = simfault.Status502
	Fault503          = simfault.Status503
	Fault429          = simfault.Status429
	FaultReset        = simfault.Reset
	FaultLoseResponse = simfault.LoseResponse
)

// faultProfile draws the four status faults when Faults.Kinds is empty and spares token
// requests from random faults unless Faults.Operations names them.
var faultProfile = simfault.Profile{Spared: []string{opToken}}

// inject answers c with fault kind, in the error format of the called service.
func (s *Server) inject(c *call, kind FaultKind) {
	if kind.AppliesRequest() {
		real := c.w
		c.w = httptest.NewRecorder()
		s.serve(c)
		c.w = real
	}
	simfault.Write(c.w, kind, func(w http.ResponseWriter, status int) {
		msg := fmt.Sprintf("injected %d", status)
		if status == http.StatusTooManyRequests {
			msg = "Too Many Requests"
		}
		writeError(w, c.route.service, status, msg)
	})
}
