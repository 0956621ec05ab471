package vault

import (
	"strings"
	"testing"
)

func TestParseRef(t *testing.T) {
	cases := []struct {
		ref       string
		path, key string
		err       string
	}{
		{ref: "vault:secret/site/rancher#password", path: "secret/site/rancher", key: "password"},
		{ref: "vault:kv1/waldur#token", path: "kv1/waldur", key: "token"},
		{ref: "vault:team/kv/site/x#a#b", path: "team/kv/site/x", key: "a#b"},
		{ref: "vault:/secret/site/#k", path: "secret/site", key: "k"},
		{ref: "secret/site#k", err: `must start with "vault:"`},
		{ref: "vault:secret/site", err: "missing #<key>"},
		{ref: "vault:secret/site#", err: "empty key"},
		{ref: "vault:secret/site# k", err: "key has leading or trailing spaces"},
		{ref: "vault:secret#k", err: `secret path "secret" must be <mount>/<path>`},
		{ref: "vault:#k", err: `secret path "" must be <mount>/<path>`},
		{ref: "vault:secret//x#k", err: "has an empty segment"},
		{ref: "vault:secret/../sys#k", err: `has a ".." segment`},
		{ref: "vault: secret/x#k", err: "leading or trailing spaces"},
	}
	for _, c := range cases {
		t.Run(c.ref, func(t *testing.T) {
			got, err := ParseRef(c.ref)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, %v; want error %q", got, err, c.err)
				}
				return
			}
			if err != nil || got.Path != c.path || got.Key != c.key {
				t.Fatalf("got %+v, %v; want %s # %s", got, err, c.path, c.key)
			}
			if again, err := ParseRef(got.String()); err != nil || again != got {
				t.Fatalf("round trip %q: %+v, %v", got.String(), again, err)
			}
		})
	}
}
