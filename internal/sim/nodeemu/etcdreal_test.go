package nodeemu

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/testenv"
)

// realEtcd returns an EtcdProcs on Debian's etcd, skipping outside the real-server tier and
// without the binary (a failure with SITE_AGENT_REQUIRE_REAL=1).
func realEtcd(t *testing.T) *EtcdProcs {
	t.Helper()
	if err := testenv.Gate(); err != nil {
		t.Skip(err)
	}
	bin, err := exec.LookPath("etcd")
	if err == nil {
		err = errPlatform
	}
	if err != nil {
		if os.Getenv(testenv.EnvRequireReal) == "1" {
			t.Fatalf("etcd (Debian's etcd-server): %v", err)
		}
		t.Skip(err)
	}
	e := NewEtcdProcs(bin, t.TempDir())
	t.Cleanup(e.Close)
	return e
}

// TestEtcdProcsFollowTheModel (tier 2): real etcd members and MemEtcd, driven alike, list the
// same members after every step — three servers join (learners promoted through a live member),
// a machine goes (its member stays, dead), the dead member is removed, a server joins and is
// removed again, 3 → 1 by removals — while a writer writes throughout with no failure longer
// than one election. Then two members, one dead: neither can commit a removal, and the
// model and etcd both record the lost quorum.
func TestEtcdProcsFollowTheModel(t *testing.T) {
	real, model := realEtcd(t), NewMemEtcd()
	both := func(what string, f func(Etcd) error) {
		t.Helper()
		errReal, errModel := f(real), f(model)
		if (errReal == nil) != (errModel == nil) {
			t.Fatalf("%s: etcd %v, model %v", what, errReal, errModel)
		}
		if r, m := strings.Join(real.Members(), " "), strings.Join(model.Members(), " "); r != m {
			t.Fatalf("%s: etcd members %q, model %q", what, r, m)
		}
	}
	add := func(n string) func(Etcd) error { return func(e Etcd) error { return e.Add(n) } }
	down := func(n string) func(Etcd) error { return func(e Etcd) error { e.Down(n); return nil } }
	remove := func(n string) func(Etcd) error {
		return func(e Etcd) error {
			// etcd refuses to remove a voter until the others have been connected for 5 s
			// (strict reconfiguration check, HealthInterval); RKE2's controller retries.
			deadline := time.Now().Add(20 * time.Second)
			for {
				ok, err := e.Remove(n)
				if ok || time.Now().After(deadline) {
					return err
				}
				time.Sleep(500 * time.Millisecond)
			}
		}
	}
	for _, n := range []string{"s0", "s1", "s2"} {
		both("join "+n, add(n))
	}
	both("s2's machine goes", down("s2"))
	both("remove the dead s2", remove("s2"))
	both("join s3", add("s3"))
	both("remove s3", remove("s3"))
	both("remove s1 (3 → 1)", remove("s1"))
	if p := real.Problems(); len(p) > 0 {
		t.Fatalf("problems while scaling: %v", p)
	}
	ok, failed := real.Writes()
	t.Logf("writer: %d writes, %d failed", ok, failed)
	if ok < 10 {
		t.Fatalf("%d writes", ok)
	}

	both("join s4", add("s4"))
	both("s4's machine goes", down("s4"))
	both("remove s4 without quorum", func(e Etcd) error { _, err := e.Remove("s4"); return err })
	if len(real.Problems()) == 0 || len(model.Problems()) == 0 {
		t.Fatalf("two members, one dead: etcd %v, model %v", real.Problems(), model.Problems())
	}
}
