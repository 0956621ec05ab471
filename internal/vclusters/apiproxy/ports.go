package apiproxy

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
)

// Ports hands out loopback listeners: from [Base, Base+Count) when Base > 0, else any free port.
// A port is reserved from the moment its listener is bound until Release.
type Ports struct {
	base, count int

	mu   sync.Mutex
	held map[int]bool
}

// NewPorts returns a pool; base 0 lets the kernel choose.
func NewPorts(base, count int) *Ports {
	if count <= 0 {
		count = 1000
	}
	return &Ports{base: base, count: count, held: map[int]bool{}}
}

// Listen binds 127.0.0.1:preferred when it is free (e.g. the port a cluster had before a
// restart), else the lowest free port of the range (or any free port without a range).
func (ps *Ports) Listen(preferred int) (net.Listener, error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if preferred > 0 && !ps.held[preferred] {
		if ln, err := listen(preferred); err == nil {
			ps.held[preferred] = true
			return ln, nil
		}
	}
	if ps.base <= 0 {
		ln, err := listen(0)
		if err != nil {
			return nil, err
		}
		ps.held[ln.Addr().(*net.TCPAddr).Port] = true
		return ln, nil
	}
	for port := ps.base; port < ps.base+ps.count; port++ {
		if ps.held[port] {
			continue
		}
		if ln, err := listen(port); err == nil {
			ps.held[port] = true
			return ln, nil
		}
	}
	return nil, fmt.Errorf("no free port in 127.0.0.1:%d-%d", ps.base, ps.base+ps.count-1)
}

// Release returns a port to the pool (the caller has closed its listener).
func (ps *Ports) Release(port int) {
	ps.mu.Lock()
	delete(ps.held, port)
	ps.mu.Unlock()
}

func listen(port int) (net.Listener, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	if _, ok := ln.Addr().(*net.TCPAddr); !ok {
		_ = ln.Close()
		return nil, errors.New("not a TCP listener")
	}
	return ln, nil
}
