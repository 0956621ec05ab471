package nodeemu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// etcdProc is one etcd member's process on loopback ports, its log in its data directory.
type etcdProc struct {
	name, peer, client, dir string
	cmd                     *exec.Cmd
	done                    chan struct{} // closed when the process has exited
}

// etcdTiming: heartbeat and election timeout (ms) of every member. etcd's defaults (100, 1000)
// suit a machine that is shared and loaded; the data is in tmpfs where available.
const (
	etcdHeartbeatMS = 100
	etcdElectionMS  = 1000
)

// startEtcd starts a member. initial is etcd's --initial-cluster (name=peer, …), state "new"
// for the first member of a cluster or "existing" for one added through a live member.
func startEtcd(bin, dir, name, clusterToken, initial, state string, peer, client string) (*etcdProc, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(filepath.Join(dir, "etcd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--name", name, "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", initial, "--initial-cluster-state", state, "--initial-cluster-token", clusterToken,
		"--heartbeat-interval", strconv.Itoa(etcdHeartbeatMS), "--election-timeout", strconv.Itoa(etcdElectionMS),
		"--logger", "zap", "--log-outputs", "stderr")
	cmd.Stdout, cmd.Stderr = logf, logf
	setGroup(cmd)
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("start etcd %s: %w", name, err)
	}
	p := &etcdProc{name: name, peer: peer, client: client, dir: dir, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = logf.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *etcdProc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// kill ends the process at once (the machine is gone) and waits for it.
func (p *etcdProc) kill() {
	if p.alive() {
		killGroup(p.cmd)
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

// logTail is the end of the member's log, for errors.
func (p *etcdProc) logTail() string {
	b, _ := os.ReadFile(filepath.Join(p.dir, "etcd.log"))
	return tail(string(b), 8)
}

// loopbackURLs picks two free loopback ports: the peer and client URLs of a member.
func loopbackURLs() (peer, client string, err error) {
	var urls [2]string
	for i := range urls {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", "", err
		}
		defer l.Close()
		urls[i] = "http://" + l.Addr().String()
	}
	return urls[0], urls[1], nil
}

// etcdMember is a member as etcd's v3 API lists it (IDs are uint64 as JSON strings).
type etcdMember struct {
	ID         string   `json:"ID"`
	Name       string   `json:"name"`
	PeerURLs   []string `json:"peerURLs"`
	ClientURLs []string `json:"clientURLs"`
	IsLearner  bool     `json:"isLearner"`
}

// gateway calls etcd's v3 API through its HTTP/JSON gateway (POST /v3/…), as etcdctl would over
// gRPC. A refusal is an error with etcd's message.
func gateway(ctx context.Context, hc *http.Client, client, path string, in, out any) error {
	body, _ := json.Marshal(in)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, client+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	var failure struct {
		Error string `json:"error"`
	}
	if resp.StatusCode != http.StatusOK {
		if json.Unmarshal(raw, &failure) == nil && failure.Error != "" {
			return errors.New(failure.Error)
		}
		return fmt.Errorf("%s: HTTP %d", path, resp.StatusCode)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}

func memberList(ctx context.Context, hc *http.Client, client string) ([]etcdMember, error) {
	var out struct{ Members []etcdMember }
	err := gateway(ctx, hc, client, "/v3/cluster/member/list", map[string]any{}, &out)
	return out.Members, err
}

// waitHealthy polls the member's /health until it answers true.
func waitHealthy(ctx context.Context, hc *http.Client, p *etcdProc) error {
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.client+"/health", nil)
		resp, err := hc.Do(req)
		if err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if strings.Contains(string(b), `"health":"true"`) {
				return nil
			}
		}
		if !p.alive() {
			return fmt.Errorf("etcd %s exited:\n%s", p.name, p.logTail())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("etcd %s not healthy: %w\n%s", p.name, ctx.Err(), p.logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
