package simhttp

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRecorder(t *testing.T) {
	cases := []struct {
		name  string
		write func(w http.ResponseWriter)
		want  int
	}{
		{"nothing", func(http.ResponseWriter) {}, 200},
		{"implicit 200", func(w http.ResponseWriter) { _, _ = w.Write([]byte("x")) }, 200},
		{"explicit", func(w http.ResponseWriter) { w.WriteHeader(404) }, 404},
		{"first wins", func(w http.ResponseWriter) { w.WriteHeader(409); w.WriteHeader(500) }, 409},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			under := httptest.NewRecorder()
			r := NewRecorder(under)
			c.write(r)
			r.Flush()
			if r.Status() != c.want {
				t.Fatalf("status %d, want %d", r.Status(), c.want)
			}
			if !under.Flushed {
				t.Fatal("flush not passed on")
			}
		})
	}
}
