package simfault

import (
	"fmt"
	"net"
	"net/http"
)

// Answer writes the response of a status fault with the given HTTP status, shaped like the
// simulated service (or the proxy in front of it) answers. Write has already set
// Retry-After: 0 on a 429.
type Answer func(w http.ResponseWriter, status int)

// Write answers with fault k: a status fault through answer (nil means ProxyPage), a reset
// (Reset, LoseResponse or an unknown kind) by ResetConnection. For LoseResponse the simulator
// applies the request first and discards its answer.
func Write(w http.ResponseWriter, k Kind, answer Answer) {
	status := k.Status()
	if status == 0 {
		ResetConnection(w)
		return
	}
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "0")
	}
	if answer == nil {
		answer = ProxyPage
	}
	answer(w, status)
}

// ProxyPage answers like a reverse proxy or load balancer in front of the service:
// "<html><body><h1>502 Bad Gateway</h1></body></html>".
func ProxyPage(w http.ResponseWriter, status int) {
	HTML(w, status, fmt.Sprintf("<html><body><h1>%d %s</h1></body></html>", status, http.StatusText(status)))
}

// HTML answers with status and an HTML body.
func HTML(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// ResetConnection drops the client connection without a response (a TCP RST where possible).
// Where the connection cannot be hijacked (HTTP/2) it aborts the handler, so the server
// resets the stream.
func ResetConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
