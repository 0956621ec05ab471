package apiproxy

// BreakListener closes the proxy's current listener as a failing socket would.
func (p *Proxy) BreakListener() {
	p.mu.Lock()
	ln := p.ln
	p.mu.Unlock()
	_ = ln.Close()
}
