package vclusters

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStateFileRoundTripIsAtomicAndHoldsNoSecrets(t *testing.T) {
	dir := t.TempDir()
	f := newStateFile(dir)
	if recs, err := f.load(); err != nil || recs != nil {
		t.Fatalf("empty dir: %v %v", recs, err)
	}
	in := []Record{
		{Name: "b", ID: "vc-2", Status: StatusConnected, Step: StepImported, RancherID: "c-x", ProxyPort: 8441, Registered: true,
			CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		{Name: "a", ID: "vc-1", Status: StatusError, Reason: "rancher import: 503", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
	}
	if err := f.save(in); err != nil {
		t.Fatal(err)
	}
	out, err := f.load()
	if err != nil || len(out) != 2 || out[0] != in[1] || out[1] != in[0] {
		t.Fatalf("load: %+v %v, want %+v sorted by name", out, err, in)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "state.json" {
		t.Errorf("directory holds %v: temporary files left behind", entries)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "state.json"))
	if strings.Contains(strings.ToLower(string(data)), "token\"") {
		t.Errorf("state file mentions a token: %s", data)
	}
}

func TestStateFileRefusesWhatItCannotTrust(t *testing.T) {
	for name, content := range map[string]string{
		"not JSON":      "{",
		"other version": `{"version": 9, "clusters": []}`,
		"bad name":      `{"version": 1, "clusters": [{"name": "Bad_Name"}]}`,
		"repeated name": `{"version": 1, "clusters": [{"name": "a"}, {"name": "a"}]}`,
	} {
		dir := t.TempDir()
		_ = os.WriteFile(filepath.Join(dir, "state.json"), []byte(content), 0o600)
		if _, err := newStateFile(dir).load(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
