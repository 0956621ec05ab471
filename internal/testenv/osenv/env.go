package osenv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/testenv"

	"github.com/gophercloud/gophercloud/v2"
)

const (
	// StateEnvVar names the variable that overrides the state directory.
	StateEnvVar = "SITE_AGENT_OS_STATE"
	// DefaultStateDir is where scripts/openstack/up.sh keeps its state.
	DefaultStateDir = "/var/tmp/site-agent-openstack"
	// RequireRealEnvVar, when "1", turns a missing environment into a failure.
	RequireRealEnvVar = "SITE_AGENT_REQUIRE_REAL"
)

// Env is the connection data of the loopback OpenStack started by up.sh.
type Env struct {
	AuthURL         string
	Username        string
	Password        string
	ProjectName     string
	UserDomain      string
	ProjectDomain   string
	Region          string
	ExternalNetwork string

	// Set only when up.sh --compute runs real Nova servers (LoadCompute requires them).
	Compute     bool   // SITE_AGENT_OS_COMPUTE=1
	Image       string // SITE_AGENT_OS_IMAGE: a 1 KiB raw Glance image servers boot from
	ComputeHost string // SITE_AGENT_OS_COMPUTE_HOST: the fake-driver nova-compute host
}

// fields maps env-file variable names to the Env field they fill.
func (e *Env) fields() map[string]*string {
	return map[string]*string{
		"OS_AUTH_URL":                    &e.AuthURL,
		"OS_USERNAME":                    &e.Username,
		"OS_PASSWORD":                    &e.Password,
		"OS_PROJECT_NAME":                &e.ProjectName,
		"OS_USER_DOMAIN_NAME":            &e.UserDomain,
		"OS_PROJECT_DOMAIN_NAME":         &e.ProjectDomain,
		"OS_REGION_NAME":                 &e.Region,
		"SITE_AGENT_OS_EXTERNAL_NETWORK": &e.ExternalNetwork,
	}
}

// optional maps the env-file variables that may be absent.
func (e *Env) optional() map[string]*string {
	return map[string]*string{"SITE_AGENT_OS_IMAGE": &e.Image, "SITE_AGENT_OS_COMPUTE_HOST": &e.ComputeHost}
}

// StateDir returns ${SITE_AGENT_OS_STATE:-/var/tmp/site-agent-openstack}.
func StateDir() string {
	if d := os.Getenv(StateEnvVar); d != "" {
		return d
	}
	return DefaultStateDir
}

// EnvFile returns the path of the env file written by up.sh.
func EnvFile() string { return filepath.Join(StateDir(), "env") }

// Load reads the env file written by scripts/openstack/up.sh. When the file
// is absent it skips the test with a message naming the script, unless
// SITE_AGENT_REQUIRE_REAL=1, in which case the test fails. A present but
// malformed file always fails the test.
func Load(t testing.TB) Env {
	t.Helper()
	if err := testenv.Gate(); err != nil {
		t.Skip("osenv: " + err.Error())
		return Env{}
	}
	path := EnvFile()
	env, err := LoadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		msg := fmt.Sprintf("no OpenStack environment at %s: run scripts/openstack/up.sh (as root) first", path)
		if os.Getenv(RequireRealEnvVar) == "1" {
			t.Fatalf("%s (%s=1 requires it)", msg, RequireRealEnvVar)
		}
		t.Skip(msg)
	}
	if err != nil {
		t.Fatalf("load OpenStack environment: %v", err)
	}
	return env
}

// LoadFile reads and parses one env file.
func LoadFile(path string) (Env, error) {
	f, err := os.Open(path)
	if err != nil {
		return Env{}, err
	}
	defer f.Close()
	env, err := Parse(f)
	if err != nil {
		return Env{}, fmt.Errorf("%s: %w", path, err)
	}
	return env, nil
}

// Parse reads `export KEY=VALUE` lines (the "export" is optional; values may
// be single- or double-quoted). Blank lines and # comments are ignored,
// unknown keys are ignored, and every Env field must be set.
func Parse(r io.Reader) (Env, error) {
	var env Env
	fields := env.fields()
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, err := parseLine(line)
		if err != nil {
			return Env{}, fmt.Errorf("line %d: %w", n, err)
		}
		if dst, ok := fields[key]; ok {
			*dst = value
		}
		if dst, ok := env.optional()[key]; ok {
			*dst = value
		}
		if key == "SITE_AGENT_OS_COMPUTE" {
			env.Compute = value == "1"
		}
	}
	if err := sc.Err(); err != nil {
		return Env{}, err
	}
	var missing []string
	for key, dst := range fields {
		if *dst == "" {
			missing = append(missing, key)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return Env{}, fmt.Errorf("missing or empty: %s", strings.Join(missing, ", "))
	}
	if env.Compute && (env.Image == "" || env.ComputeHost == "") {
		return Env{}, errors.New("SITE_AGENT_OS_COMPUTE=1 needs SITE_AGENT_OS_IMAGE and SITE_AGENT_OS_COMPUTE_HOST")
	}
	return env, nil
}

// LoadCompute is Load for tests that boot real Nova servers: an environment without the
// compute part (up.sh without --compute) skips the test with a message naming the flag, or
// fails it when SITE_AGENT_REQUIRE_REAL=1.
func LoadCompute(t testing.TB) Env {
	t.Helper()
	env := Load(t)
	if !env.Compute {
		msg := fmt.Sprintf("the OpenStack at %s has no compute part (real Nova servers): run scripts/openstack/up.sh --compute", EnvFile())
		if os.Getenv(RequireRealEnvVar) == "1" {
			t.Fatalf("%s (%s=1 requires it)", msg, RequireRealEnvVar)
		}
		t.Skip(msg)
	}
	return env
}

func parseLine(line string) (key, value string, err error) {
	line = strings.TrimPrefix(line, "export ")
	key, value, ok := strings.Cut(line, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" || strings.ContainsAny(key, " \t") {
		return "", "", fmt.Errorf("want KEY=VALUE, got %q", line)
	}
	if n := len(value); n >= 2 && (value[0] == '\'' || value[0] == '"') {
		if value[n-1] != value[0] {
			return "", "", fmt.Errorf("%s: unterminated quote", key)
		}
		value = value[1 : n-1]
	}
	return key, value, nil
}

// AuthOptions returns project-scoped password credentials for gophercloud.
func (e Env) AuthOptions() gophercloud.AuthOptions {
	return gophercloud.AuthOptions{
		IdentityEndpoint: e.AuthURL,
		Username:         e.Username,
		Password:         e.Password,
		DomainName:       e.UserDomain,
		AllowReauth:      true,
		Scope: &gophercloud.AuthScope{
			ProjectName: e.ProjectName,
			DomainName:  e.ProjectDomain,
		},
	}
}

// EndpointOpts selects the public endpoints of the env's region.
func (e Env) EndpointOpts() gophercloud.EndpointOpts {
	return gophercloud.EndpointOpts{Region: e.Region, Availability: gophercloud.AvailabilityPublic}
}
