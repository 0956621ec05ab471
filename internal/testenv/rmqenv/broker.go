package rmqenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/go-stomp/stomp/v3"
)

// Broker declares queues through the management API and publishes over STOMP, like
// Mastermind. It implements waldursim.EventBroker.
type Broker struct {
	env    *Env
	hc     *http.Client
	mu     sync.Mutex
	conns  map[string]*stomp.Conn // publisher per vhost
	vhosts map[string]bool
}

// Broker returns a broker for one test; the virtual hosts it creates are deleted at cleanup.
func (e *Env) Broker(t testing.TB) *Broker {
	b := &Broker{env: e, hc: &http.Client{Timeout: 10 * time.Second}, conns: map[string]*stomp.Conn{}, vhosts: map[string]bool{}}
	t.Cleanup(b.close)
	return b
}

// DeclareQueue creates the vhost, the user with its password and permissions, and a durable
// queue with arguments (so a client that redeclares it through /queue/ would be refused).
func (b *Broker) DeclareQueue(vhost, user, password, queue string) error {
	v := url.PathEscape(vhost)
	steps := []struct {
		path string
		body any
	}{
		{"/api/vhosts/" + v, nil},
		{"/api/users/" + url.PathEscape(user), map[string]any{"password": password, "tags": ""}},
		{"/api/permissions/" + v + "/" + url.PathEscape(user), map[string]string{"configure": "^$", "write": "^$", "read": "^subscription_.*"}},
		{"/api/permissions/" + v + "/" + url.PathEscape(b.env.User), map[string]string{"configure": ".*", "write": ".*", "read": ".*"}},
		{"/api/queues/" + v + "/" + url.PathEscape(queue), map[string]any{"durable": true, "auto_delete": false,
			"arguments": map[string]any{"x-max-length": 10000}}},
	}
	for _, s := range steps {
		if err := b.put(s.path, s.body); err != nil {
			return err
		}
	}
	b.mu.Lock()
	b.vhosts[vhost] = true
	b.mu.Unlock()
	return nil
}

func (b *Broker) put(path string, body any) error {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(http.MethodPut, b.env.MgmtURL+path, rd)
	req.SetBasicAuth(b.env.User, b.env.Password)
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusNoContent {
		msg, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("PUT %s: %d %s", path, resp.StatusCode, msg)
	}
	return nil
}

// Publish sends body to the queue (default exchange) and waits for the broker's receipt.
func (b *Broker) Publish(vhost, queue string, body []byte) error {
	for attempt := 0; ; attempt++ {
		c, err := b.conn(vhost)
		if err == nil {
			err = c.Send("/amq/queue/"+queue, "application/json", body, stomp.SendOpt.Receipt,
				stomp.SendOpt.Header("persistent", "true"))
			if err == nil {
				return nil
			}
			b.drop(vhost, c)
		}
		if attempt == 1 {
			return err
		}
	}
}

func (b *Broker) conn(vhost string) (*stomp.Conn, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c := b.conns[vhost]; c != nil {
		return c, nil
	}
	// Bounded: a broker that is starting accepts TCP before it answers STOMP.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	nc, err := net.DialTimeout("tcp", b.env.StompAddr, 3*time.Second)
	if err != nil {
		return nil, err
	}
	c, err := stomp.ConnectWithContext(ctx, nc, stomp.ConnOpt.Login(b.env.User, b.env.Password),
		stomp.ConnOpt.Host(vhost), stomp.ConnOpt.HeartBeat(0, 0), stomp.ConnOpt.RcvReceiptTimeout(5*time.Second),
		stomp.ConnOpt.Logger(quiet{}))
	if err != nil {
		_ = nc.Close()
		return nil, err
	}
	b.conns[vhost] = c
	return c, nil
}

func (b *Broker) drop(vhost string, c *stomp.Conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conns[vhost] == c {
		delete(b.conns, vhost)
	}
	_ = c.MustDisconnect()
}

func (b *Broker) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.conns {
		_ = c.MustDisconnect()
	}
	for v := range b.vhosts {
		req, _ := http.NewRequest(http.MethodDelete, b.env.MgmtURL+"/api/vhosts/"+url.PathEscape(v), nil)
		req.SetBasicAuth(b.env.User, b.env.Password)
		if resp, err := b.hc.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}

// quiet discards go-stomp's log lines.
type quiet struct{}

func (quiet) Debugf(string, ...any)   {}
func (quiet) Infof(string, ...any)    {}
func (quiet) Warningf(string, ...any) {}
func (quiet) Errorf(string, ...any)   {}
func (quiet) Debug(string)            {}
func (quiet) Info(string)             {}
func (quiet) Warning(string)          {}
func (quiet) Error(string)            {}
