package simhttp

import "net/http"

// Recorder remembers the status a handler answered with. It keeps Hijack (through Unwrap and
// http.ResponseController) and Flush available, so streaming and upgraded connections still work.
type Recorder struct {
	http.ResponseWriter
	status int
}

// NewRecorder wraps w.
func NewRecorder(w http.ResponseWriter) *Recorder { return &Recorder{ResponseWriter: w} }

// Status is the status the client sees: the first one written, or 200 (net/http's default) when
// the handler wrote none.
func (r *Recorder) Status() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

// WriteHeader records the first status and passes it on.
func (r *Recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

// Write records an implicit 200.
func (r *Recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the underlying writer.
func (r *Recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Flush flushes the underlying writer when it can (reverse proxies stream through it).
func (r *Recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
