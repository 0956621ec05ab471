package keycloaksim

import (
	"net/http"

	"github.com/waldur/site-agent/internal/sim/simfault"
)

// FaultKind is one kind of injected failure.
type FaultKind = simfault.Kind

// Faults configures random fault injection (see simfault.Config), drawn in request order after
// routing; Operations are route names (RouteGroups, ...).
type Faults = simfault.Config

// Fault kinds. Status faults and FaultReset never apply the request; FaultLoseResponse applies
// it and then drops the connection, so the client never learns the outcome.
const (
	Fault500          = simfault.Status500    // Keycloak's {"error":"unknown_error"}
	Fault502          = simfault.Status502    // reverse proxy "502 Bad Gateway" page
	Fault503          = simfault.Status503    // reverse proxy "503 Service Unavailable" page
	Fault429          = simfault.Status429    // rate limiter in front of Keycloak, Retry-After: 0
	FaultReset        = simfault.Reset        // connection reset before any response
	FaultLoseResponse = simfault.LoseResponse // request applied, then connection reset
)

// faultProfile draws 500, 502, 503, 429 and reset when Faults.Kinds is empty.
var faultProfile = simfault.Profile{Kinds: []FaultKind{Fault500, Fault502, Fault503, Fault429, FaultReset}}

// answerFault writes a status fault: Keycloak's own error document for a 500, the pages of
// the proxy or rate limiter in front of it otherwise.
func answerFault(w http.ResponseWriter, status int) {
	if status == http.StatusInternalServerError {
		writeError(w, status, "unknown_error")
		return
	}
	simfault.ProxyPage(w, status)
}
