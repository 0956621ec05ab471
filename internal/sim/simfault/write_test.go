package simfault

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

type reply struct {
	status      int // 0: the connection failed
	contentType string
	retryAfter  string
	body        string
}

// serveFault starts a server that answers every request with Write(kind, answer) and returns
// what a client without connection reuse sees.
func serveFault(t *testing.T, kind Kind, answer Answer) reply {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		Write(w, kind, answer)
	}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		return reply{}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Retry-After"), string(b)}
}

func TestWriteProxyPages(t *testing.T) {
	html := "text/html; charset=utf-8"
	tests := []struct {
		kind Kind
		want reply
	}{
		{Status500, reply{500, html, "", "<html><body><h1>500 Internal Server Error</h1></body></html>"}},
		{Status502, reply{502, html, "", "<html><body><h1>502 Bad Gateway</h1></body></html>"}},
		{Status503, reply{503, html, "", "<html><body><h1>503 Service Unavailable</h1></body></html>"}},
		{Status429, reply{429, html, "0", "<html><body><h1>429 Too Many Requests</h1></body></html>"}},
		{Reset, reply{}},
		{LoseResponse, reply{}},
		{Kind(42), reply{}},
	}
	for _, tt := range tests {
		t.Run(tt.kind.String(), func(t *testing.T) {
			if got := serveFault(t, tt.kind, nil); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestWriteUsesAnswer(t *testing.T) {
	answer := func(w http.ResponseWriter, status int) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{"code":`+strconv.Itoa(status)+`}`)
	}
	tests := []struct {
		kind Kind
		want reply
	}{
		{Status500, reply{500, "application/json", "", `{"code":500}`}},
		{Status502, reply{502, "application/json", "", `{"code":502}`}},
		{Status503, reply{503, "application/json", "", `{"code":503}`}},
		{Status429, reply{429, "application/json", "0", `{"code":429}`}},
		{Reset, reply{}}, // resets never reach the answer
		{LoseResponse, reply{}},
	}
	for _, tt := range tests {
		t.Run(tt.kind.String(), func(t *testing.T) {
			if got := serveFault(t, tt.kind, answer); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// A writer that cannot be hijacked makes ResetConnection abort the handler, which net/http
// turns into a dropped connection or stream.
func TestResetConnectionWithoutHijacker(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !errors.Is(r.(error), http.ErrAbortHandler) {
			t.Errorf("recovered %v, want http.ErrAbortHandler", r)
		}
	}()
	ResetConnection(httptest.NewRecorder())
}
