package osenv

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const fullEnv = `# written by scripts/openstack/up.sh
export OS_AUTH_URL='http://127.0.0.1:5000/v3'
export OS_USERNAME=admin
export OS_PASSWORD="s3cr=t"
export OS_PROJECT_NAME='admin'
export OS_USER_DOMAIN_NAME=Default
export OS_PROJECT_DOMAIN_NAME=Default
export OS_REGION_NAME=RegionOne
export OS_IDENTITY_API_VERSION=3

SITE_AGENT_OS_EXTERNAL_NETWORK=public
`

func TestParse(t *testing.T) {
	want := Env{
		AuthURL: "http://127.0.0.1:5000/v3", Username: "admin", Password: "s3cr=t",
		ProjectName: "admin", UserDomain: "Default", ProjectDomain: "Default",
		Region: "RegionOne", ExternalNetwork: "public",
	}
	tests := []struct {
		name    string
		in      string
		want    Env
		wantErr string
	}{
		{name: "full file", in: fullEnv, want: want},
		{name: "with compute", in: fullEnv + "export SITE_AGENT_OS_COMPUTE='1'\nexport SITE_AGENT_OS_IMAGE='tiny'\nexport SITE_AGENT_OS_COMPUTE_HOST='c1'\n",
			want: func() Env { w := want; w.Compute, w.Image, w.ComputeHost = true, "tiny", "c1"; return w }()},
		{name: "compute without its image", in: fullEnv + "export SITE_AGENT_OS_COMPUTE=1\n",
			wantErr: "SITE_AGENT_OS_COMPUTE=1 needs SITE_AGENT_OS_IMAGE"},
		{name: "missing keys are named", in: "export OS_USERNAME=admin\n",
			wantErr: "missing or empty: OS_AUTH_URL, OS_PASSWORD, OS_PROJECT_DOMAIN_NAME"},
		{name: "empty value counts as missing",
			in:      strings.Replace(fullEnv, "OS_REGION_NAME=RegionOne", "OS_REGION_NAME=''", 1),
			wantErr: "missing or empty: OS_REGION_NAME"},
		{name: "line without equals", in: "export OS_USERNAME\n", wantErr: "line 1: want KEY=VALUE"},
		{name: "unterminated quote", in: "export OS_PASSWORD='abc\n", wantErr: "line 1: OS_PASSWORD: unterminated quote"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse() error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// recordingTB captures how Load ends a test; Skip and Fatal stop the calling
// goroutine like the real ones do.
type recordingTB struct {
	testing.TB
	mu      sync.Mutex
	skipped string
	failed  string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Skip(args ...any) {
	r.mu.Lock()
	r.skipped = fmt.Sprint(args...)
	r.mu.Unlock()
	runtime.Goexit()
}
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.failed = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit()
}

func runLoad(tb *recordingTB) (Env, bool) {
	var env Env
	returned := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		env = Load(tb)
		returned = true
	}()
	<-done
	return env, returned
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name        string
		stateDir    string
		file        string
		requireReal string
		wantSkip    string
		wantFail    string
		wantUser    string
		realTests   string // SITE_AGENT_REAL_TESTS; default "1"
	}{
		{name: "absent file skips naming up.sh", stateDir: filepath.Join(dir, "none"),
			wantSkip: "scripts/openstack/up.sh"},
		{name: "absent file fails when real servers are required", stateDir: filepath.Join(dir, "none"),
			requireReal: "1", wantFail: "SITE_AGENT_REQUIRE_REAL=1"},
		{name: "malformed file fails", stateDir: filepath.Join(dir, "bad"), file: "export OS_USERNAME=x\n",
			wantFail: "missing or empty"},
		{name: "good file loads", stateDir: filepath.Join(dir, "good"), file: fullEnv, wantUser: "admin"},
		{name: "outside the real-server tier skips even with a file", stateDir: filepath.Join(dir, "good"), file: fullEnv,
			realTests: "0", wantSkip: "scripts/test-real.sh"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.file != "" {
				if err := os.MkdirAll(tc.stateDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(tc.stateDir, "env"), []byte(tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv(StateEnvVar, tc.stateDir)
			t.Setenv(RequireRealEnvVar, tc.requireReal)
			real := tc.realTests
			if real == "" {
				real = "1"
			}
			t.Setenv("SITE_AGENT_REAL_TESTS", real)
			tb := &recordingTB{}
			env, returned := runLoad(tb)
			if !strings.Contains(tb.skipped, tc.wantSkip) || (tc.wantSkip == "") != (tb.skipped == "") {
				t.Errorf("skip message = %q, want it to contain %q", tb.skipped, tc.wantSkip)
			}
			if !strings.Contains(tb.failed, tc.wantFail) || (tc.wantFail == "") != (tb.failed == "") {
				t.Errorf("fatal message = %q, want it to contain %q", tb.failed, tc.wantFail)
			}
			if returned != (tc.wantUser != "") || env.Username != tc.wantUser {
				t.Errorf("Load returned=%v username=%q, want username %q", returned, env.Username, tc.wantUser)
			}
		})
	}
}

func TestStateDirDefault(t *testing.T) {
	t.Setenv(StateEnvVar, "")
	if got := EnvFile(); got != "/var/tmp/site-agent-openstack/env" {
		t.Errorf("EnvFile() = %q, want the default state dir", got)
	}
}
