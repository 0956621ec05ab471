package e2e

import (
	"strings"
	"testing"
)

// Diagnostics of an rke2 offering names every upstream the backend needs — Rancher v1 and v3,
// Vault's AppRole mount and the token's rights, OpenStack (image, flavor, quota headroom),
// Keycloak — and prints none of their secrets.
func TestRKE2Diagnostics(t *testing.T) {
	w := newRKE2World(t)
	// OpenStack's default quotas (10 instances) cannot hold the largest order the offering
	// allows (5 servers + 20 agents): named, with the shortfall.
	r := w.run("diagnostics", "-c", w.config)
	if r.code != 1 || !strings.Contains(r.stdout, "nova instances: needs 25, 10 free") {
		t.Fatalf("diagnostics with default quotas should name the instances shortfall: %s", r)
	}
	admin := w.os.AdminProjectID()
	for _, svc := range []string{"nova", "cinder", "neutron"} {
		for key := range w.os.Quotas(svc, admin) {
			w.os.SetQuota(svc, admin, key, -1)
		}
	}
	r = w.run("diagnostics", "-c", w.config)
	if r.code != 0 {
		t.Fatalf("diagnostics: %s", r)
	}
	t.Logf("diagnostics output:\n%s", r.stdout)
	out := strings.ToLower(r.stdout)
	for _, want := range []string{"rancher v1", "rancher v3", "vault approle", "openstack image cirros",
		"openstack flavor m1.large", "openstack quota headroom", "keycloak realm", "keycloak rights", "all checks passed"} {
		if !strings.Contains(out, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, r.stdout)
		}
	}
	for _, secret := range []string{vaultRoot, strings.Split(w.rs.Token(), ":")[1], w.os.Options().AdminPassword} {
		if strings.Contains(r.stdout+r.stderr, secret) {
			t.Errorf("diagnostics print a secret (%d characters)", len(secret))
		}
	}
	rancherSecret := strings.Split(w.rs.Token(), ":")[1]
	writeFile(t, w.config, strings.Replace(readFile(t, w.config), rancherSecret, "wrong-rancher-secret", 1))
	if r := w.run("diagnostics", "-c", w.config); r.code != 1 || !strings.Contains(r.stdout, "FAIL") ||
		strings.Contains(r.stdout+r.stderr, "wrong-rancher-secret") {
		t.Errorf("diagnostics with a wrong Rancher key should fail clearly, without printing it: %s", r)
	}
}
