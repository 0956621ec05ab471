package ranchersim

import (
	"net/http"

	"github.com/waldur/site-agent/internal/sim/simfault"
)

// FaultKind is one kind of injected failure.
type FaultKind = simfault.Kind

// Faults configures random fault injection (see simfault.Config), drawn in request order after
// authentication and routing. Operations are operation names (e.g. "project.create") or
// prefixes ending in "*" (e.g. "k8s.*").
type Faults = simfault.Config

// Fault kinds. Status faults and FaultReset never apply the request; FaultLoseResponse applies
// it and then drops the connection, so the client never learns the outcome.
const (
	Fault500          = simfault.Status500    // norman ServerError document
	Fault502          = simfault.Status502    // load balancer "502 Bad Gateway" page
	Fault503          = simfault.Status503    // load balancer "503 Service Unavailable" page
	Fault429          = simfault.Status429    // rate limiter, Retry-After: 0
	FaultReset        = simfault.Reset        // connection reset before any response
	FaultLoseResponse = simfault.LoseResponse // request applied, then connection reset
)

// faultProfile draws 500, 502, 503, 429 and reset when Faults.Kinds is empty.
var faultProfile = simfault.Profile{Kinds: []FaultKind{Fault500, Fault502, Fault503, Fault429, FaultReset}}

// answerFault writes a status fault: norman's error document for a 500, the pages of the load
// balancer or rate limiter in front of Rancher otherwise.
func answerFault(w http.ResponseWriter, status int) {
	if status == http.StatusInternalServerError {
		writeError(w, status, "ServerError", "Internal error occurred")
		return
	}
	simfault.ProxyPage(w, status)
}
