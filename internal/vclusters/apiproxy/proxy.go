package apiproxy

import (
	"context"
	"crypto/tls"
	"log"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Options configure one cluster's proxy.
type Options struct {
	Cluster string // for log lines
	// Upstream is the main API server; Transport reaches it (TLS trust only, no credentials).
	Upstream  *url.URL
	Transport http.RoundTripper
	// Cert is the serving certificate (for 127.0.0.1).
	Cert  tls.Certificate
	Ports *Ports
	// Preferred is the port to try first (the one the cluster had before a restart).
	Preferred int
	// Selectors scope collections: a label selector for each collection path (e.g.
	// "/api/v1/nodes"), added to every list and watch of it, beside the caller's own.
	Selectors map[string]string
	// OnRequest observes every proxied request: status and body bytes in and out.
	OnRequest func(code int, in, out int64)
	// OnMove is called with the new address after the proxy restarted on another port.
	OnMove func(addr string)
	Logger *zap.Logger
}

// Proxy is a running per-cluster API proxy.
type Proxy struct {
	o       Options
	handler http.Handler
	pipe    *pipeListener
	pipeSrv *http.Server

	mu     sync.Mutex
	ln     net.Listener
	srv    *http.Server
	addr   string
	closed bool
	done   chan struct{}
}

// Start binds a port and serves until Close.
func Start(o Options) (*Proxy, error) {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	p := &Proxy{o: o, pipe: newPipeListener(), done: make(chan struct{})}
	p.handler = p.count(p.reverseProxy())
	ln, err := o.Ports.Listen(o.Preferred)
	if err != nil {
		return nil, err
	}
	p.setListener(ln)
	p.o.Logger.Info("starting in-process api proxy", zap.String("cluster", o.Cluster),
		zap.String("address", p.Addr()), zap.String("upstream", o.Upstream.String()))
	p.pipeSrv = p.newServer()
	p.pipeSrv.Handler = steveHandler(p.handler)
	go func() { _ = p.pipeSrv.Serve(p.pipe) }()
	go p.run()
	return p, nil
}

// Addr is the proxy's current address, 127.0.0.1:<port>.
func (p *Proxy) Addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.addr
}

// Port is the proxy's current port.
func (p *Proxy) Port() int {
	_, port, _ := net.SplitHostPort(p.Addr())
	n, _ := strconv.Atoi(port)
	return n
}

// DialPipe opens an in-memory plain-HTTP connection to the proxy (the steve session's target,
// whatever address Rancher asked for).
func (p *Proxy) DialPipe(ctx context.Context, _, _ string) (net.Conn, error) {
	return p.pipe.Dial(ctx)
}

// Close stops the proxy and releases its port.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	srv := p.srv
	p.mu.Unlock()
	_ = srv.Close()
	_ = p.pipe.Close()
	_ = p.pipeSrv.Close()
	<-p.done
}

func (p *Proxy) setListener(ln net.Listener) {
	srv := p.newServer()
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{p.o.Cert}, MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2", "http/1.1"}}
	p.mu.Lock()
	p.ln, p.srv, p.addr = ln, srv, ln.Addr().String()
	p.mu.Unlock()
}

func (p *Proxy) newServer() *http.Server {
	return &http.Server{Handler: p.handler, ReadHeaderTimeout: 30 * time.Second,
		ErrorLog: log.New(zap.NewStdLog(p.o.Logger.Named("apiproxy")).Writer(), "", 0)}
}

// run serves the current listener; when it fails (not by Close) the proxy moves to a new port.
func (p *Proxy) run() {
	defer close(p.done)
	for {
		p.mu.Lock()
		ln, srv := p.ln, p.srv
		p.mu.Unlock()
		err := srv.ServeTLS(ln, "", "")
		_ = srv.Close()
		if p.isClosed() {
			p.o.Ports.Release(tcpPort(ln))
			return
		}
		p.o.Logger.Warn("api proxy failed, restarting on a new port", zap.String("cluster", p.o.Cluster), zap.Error(err))
		p.o.Ports.Release(tcpPort(ln))
		if !p.rebind() {
			return
		}
		p.o.Logger.Info("starting in-process api proxy", zap.String("cluster", p.o.Cluster),
			zap.String("address", p.Addr()), zap.String("upstream", p.o.Upstream.String()))
		if p.o.OnMove != nil {
			p.o.OnMove(p.Addr())
		}
	}
}

// rebind binds a new port, retrying every second until it succeeds or the proxy is closed.
func (p *Proxy) rebind() bool {
	for !p.isClosed() {
		ln, err := p.o.Ports.Listen(0)
		if err == nil {
			p.setListener(ln)
			if p.isClosed() { // closed while binding: the new server was never seen by Close
				_ = ln.Close()
				p.o.Ports.Release(tcpPort(ln))
				return false
			}
			return true
		}
		p.o.Logger.Warn("api proxy cannot bind a port", zap.String("cluster", p.o.Cluster), zap.Error(err))
		time.Sleep(time.Second)
	}
	return false
}

func (p *Proxy) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

func tcpPort(ln net.Listener) int {
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		return a.Port
	}
	return 0
}
