package simfault

import (
	"net/http"
	"strconv"
)

// Kind is one kind of injected failure.
type Kind int

// Fault kinds. Status faults and Reset never apply the request; LoseResponse applies it and
// then resets the connection.
const (
	Status500    Kind = iota + 1 // internal server error
	Status502                    // bad gateway (a proxy in front of the service)
	Status503                    // service unavailable (a proxy in front of the service)
	Status429                    // throttled, with Retry-After: 0
	Reset                        // connection reset before any response
	LoseResponse                 // request applied, then connection reset
)

// String names the kind as fault logs show it: "500", "502", "503", "429", "reset" or
// "lose-response".
func (k Kind) String() string {
	switch k {
	case Status500, Status502, Status503, Status429:
		return strconv.Itoa(k.Status())
	case Reset:
		return "reset"
	case LoseResponse:
		return "lose-response"
	}
	return "unknown"
}

// Status is the HTTP status the kind answers with; 0 for the kinds that reset the connection
// and for unknown kinds.
func (k Kind) Status() int {
	switch k {
	case Status500:
		return http.StatusInternalServerError
	case Status502:
		return http.StatusBadGateway
	case Status503:
		return http.StatusServiceUnavailable
	case Status429:
		return http.StatusTooManyRequests
	}
	return 0
}

// AppliesRequest reports whether the simulator must apply the request before writing the
// fault (only LoseResponse).
func (k Kind) AppliesRequest() bool { return k == LoseResponse }
