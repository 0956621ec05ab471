package rmqenv

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/testenv"
)

// DefaultStateDir is where scripts/rabbitmq/up.sh keeps its state (SITE_AGENT_RMQ_STATE
// overrides it).
const DefaultStateDir = "/var/tmp/site-agent-rabbitmq"

// Env is the loopback broker started by up.sh.
type Env struct {
	WSURL     string // ws://127.0.0.1:PORT/ws
	StompAddr string // 127.0.0.1:PORT (plain STOMP, for publishing)
	MgmtURL   string // http://127.0.0.1:PORT
	User      string // administrator
	Password  string
	Restart   string // scripts/rabbitmq/restart.sh
}

// EnvFile is the env file up.sh writes.
func EnvFile() string {
	dir := os.Getenv("SITE_AGENT_RMQ_STATE")
	if dir == "" {
		dir = DefaultStateDir
	}
	return filepath.Join(dir, "env")
}

// Load reads the env file. Outside the real-server tier it skips; a missing broker skips too,
// unless SITE_AGENT_REQUIRE_REAL=1, which makes it a failure.
func Load(t testing.TB) *Env {
	t.Helper()
	if err := testenv.Gate(); err != nil {
		t.Skip("rmqenv: " + err.Error())
	}
	e, err := LoadFile(EnvFile())
	if errors.Is(err, fs.ErrNotExist) {
		msg := "no RabbitMQ at " + EnvFile() + ": run scripts/rabbitmq/up.sh first"
		if os.Getenv(testenv.EnvRequireReal) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// LoadFile parses an env file of `export KEY=VALUE` lines.
func LoadFile(path string) (*Env, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	e := &Env{}
	fields := map[string]*string{"RABBITMQ_WS_URL": &e.WSURL, "RABBITMQ_STOMP_ADDR": &e.StompAddr, "RABBITMQ_MGMT_URL": &e.MgmtURL,
		"RABBITMQ_ADMIN_USER": &e.User, "RABBITMQ_ADMIN_PASSWORD": &e.Password, "RABBITMQ_RESTART": &e.Restart}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "export "), "=")
		if dst := fields[k]; ok && dst != nil {
			*dst = v
		}
	}
	for k, dst := range fields {
		if *dst == "" {
			return nil, fmt.Errorf("%s: %s missing", path, k)
		}
	}
	return e, sc.Err()
}

// WebSTOMP splits the Web-STOMP URL into the config keys stomp_ws_host, stomp_ws_port and
// stomp_ws_path.
func (e *Env) WebSTOMP() (host, port, path string) {
	u, err := url.Parse(e.WSURL)
	if err != nil {
		return "", "", ""
	}
	return u.Hostname(), u.Port(), u.Path
}

// Stop stops the broker (connections drop, ports close); queues survive.
func (e *Env) Stop(t testing.TB) { e.restart(t, "stop") }

// Start starts it again and returns once it answers.
func (e *Env) Start(t testing.TB) { e.restart(t, "start") }

func (e *Env) restart(t testing.TB, what string) {
	t.Helper()
	out, err := exec.Command(e.Restart, what).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", e.Restart, what, err, out)
	}
}
