package apiproxy

import (
	"io"
	"net/http"
	"net/http/httputil"
	"sync/atomic"

	"go.uber.org/zap"
)

// reverseProxy passes requests through to the main API server unchanged but for the scoping
// selectors, and without Accept-Encoding (the shared transport never asks for compression).
func (p *Proxy) reverseProxy() http.Handler {
	up := p.o.Upstream
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(up)
			pr.Out.Header.Del("Accept-Encoding")
			if sel := p.o.Selectors[pr.In.URL.Path]; sel != "" && pr.In.Method == http.MethodGet {
				q := pr.Out.URL.Query()
				if have := q.Get("labelSelector"); have != "" {
					sel = have + "," + sel
				}
				q.Set("labelSelector", sel)
				pr.Out.URL.RawQuery = q.Encode()
			}
		},
		Transport:     p.o.Transport,
		FlushInterval: -1, // watches stream
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			p.o.Logger.Debug("api proxy upstream error", zap.String("cluster", p.o.Cluster),
				zap.String("path", r.URL.Path), zap.Error(err))
			w.WriteHeader(http.StatusBadGateway)
		},
	}
}

// steveHandler answers what the agent's steve server answers itself — GET /ping with "pong"
// (rancher pkg/api/steve/health), which Rancher's clusterconnected controller asks for at
// http://not-used/ping through the steve session and without which the cluster never counts as
// connected — and passes everything else to next.
func steveHandler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ping" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			_, _ = w.Write([]byte("pong"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// count reports each request's status and body sizes to OnRequest.
func (p *Proxy) count(next http.Handler) http.Handler {
	if p.o.OnRequest == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in atomic.Int64
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = &countingBody{ReadCloser: r.Body, n: &in}
		}
		cw := &countingWriter{ResponseWriter: w}
		next.ServeHTTP(cw, r)
		code := cw.code
		if code == 0 {
			code = http.StatusOK
		}
		p.o.OnRequest(code, in.Load(), cw.n)
	})
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

type countingWriter struct {
	http.ResponseWriter
	code int
	n    int64
}

func (w *countingWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *countingWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.n += int64(n)
	return n, err
}

// Flush keeps watches streaming.
func (w *countingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
