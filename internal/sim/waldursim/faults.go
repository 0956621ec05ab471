package waldursim

import (
	"net/http"

	"github.com/waldur/site-agent/internal/sim/simfault"
)

// FaultKind is one kind of injected failure.
type FaultKind = simfault.Kind

// Faults configures random fault injection (see simfault.Config). Faults are drawn after
// routing, authentication and validation; Operations are operationIds.
type Faults = simfault.Config

// Fault kinds. Status faults and FaultReset never apply the request; FaultLoseResponse applies
// it and then drops the connection, so the client never learns the outcome.
const (
	FaultStatus500    = simfault.Status500    // Django "Server Error (500)" HTML page
	FaultStatus502    = simfault.Status502    // reverse proxy "502 Bad Gateway"
	FaultStatus503    = simfault.Status503    // reverse proxy "503 Service Unavailable"
	FaultStatus429    = simfault.Status429    // DRF throttling, with Retry-After: 0
	FaultReset        = simfault.Reset        // connection reset before any response
	FaultLoseResponse = simfault.LoseResponse // request applied, then connection reset
)

// faultProfile draws the four status faults when Faults.Kinds is empty.
var faultProfile = simfault.Profile{}

// answerFault writes a status fault as Waldur's stack does: Django's 500 page, DRF's throttling
// document, the reverse proxy's pages otherwise.
func answerFault(w http.ResponseWriter, status int) {
	switch status {
	case http.StatusInternalServerError:
		simfault.HTML(w, status, "<h1>Server Error (500)</h1>")
	case http.StatusTooManyRequests:
		writeJSON(w, status, detail("Request was throttled. Expected available in 0 seconds."))
	default:
		simfault.ProxyPage(w, status)
	}
}
