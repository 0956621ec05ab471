package vault

import (
	"strings"
	"testing"
)

// FuzzParseRef feeds arbitrary configuration strings to the vault: reference parser. What
// parses names a path of at least a mount and a secret, without empty, "." or ".." segments
// (a reference must not climb to another mount), a key without surrounding spaces, and reads
// back the same.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{
		"vault:secret/site/rancher#password", "vault:team/kv/site/x#k", "vault:secret#k", "vault:/secret/a/#k",
		"vault:secret/../sys/x#k", "vault:secret/a#", "vault:secret/a# k", "vault:secret/a#k#l", "secret/a#k", "vault:a//b#k", "vault:///// /0#0",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			return
		}
		segments := strings.Split(r.Path, "/")
		if len(segments) < 2 {
			t.Fatalf("%q: path %q has no mount and secret", s, r.Path)
		}
		for _, seg := range segments {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("%q: path %q has segment %q", s, r.Path, seg)
			}
		}
		if r.Key == "" || strings.TrimSpace(r.Key) != r.Key {
			t.Fatalf("%q: key %q", s, r.Key)
		}
		again, err := ParseRef(r.String())
		if err != nil || again != r {
			t.Fatalf("%q parses to %+v, which reads back as %+v, %v", s, r, again, err)
		}
	})
}
