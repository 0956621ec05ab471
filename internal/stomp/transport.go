package stomp

import (
	"net/http"

	"github.com/waldur/site-agent/internal/upstream"
)

// NewHTTPClient returns a client for the WebSocket handshake with the given TLS verification
// and proxy. Unlike API clients it has no overall timeout (the connection lives for hours; the
// handshake is bounded separately) and speaks HTTP/1.1 only, which the WebSocket upgrade needs.
func NewHTTPClient(o upstream.TransportOptions) *http.Client {
	tr := upstream.Transport(o)
	tr.ForceAttemptHTTP2 = false
	tr.TLSClientConfig.NextProtos = []string{"http/1.1"}
	return &http.Client{Transport: tr, CheckRedirect: upstream.NoRedirect}
}
