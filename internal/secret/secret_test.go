package secret

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestSecretNeverPrints(t *testing.T) {
	s := New("hunter2-very-secret")
	type wrapper struct {
		Token Secret
		Name  string
	}
	w := wrapper{Token: s, Name: "x"}
	js, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	outputs := []string{
		fmt.Sprint(s), fmt.Sprintf("%v %s %q %x %d %+v %#v", s, s, s, s, s, s, s),
		fmt.Sprintf("%+v", w), fmt.Sprintf("%#v", w), string(js), s.String(),
	}
	for _, out := range outputs {
		if strings.Contains(out, "hunter2") {
			t.Errorf("secret leaked: %s", out)
		}
		if !strings.Contains(out, Redacted) {
			t.Errorf("expected %s in %s", Redacted, out)
		}
	}
	if s.Reveal() != "hunter2-very-secret" {
		t.Fatal("Reveal lost the value")
	}
}

func TestEmptySecretPrintsEmpty(t *testing.T) {
	var s Secret
	if !s.IsZero() || s.String() != "" {
		t.Fatalf("empty secret should print empty, got %q", s.String())
	}
}

func TestScrub(t *testing.T) {
	a := New("abcdef-123456")
	defer a.Forget()
	got := Scrub(`upstream said: token "abcdef-123456" is invalid; xabcdef-1234567 too`)
	want := `upstream said: token "[REDACTED]" is invalid; x[REDACTED]7 too`
	if got != want {
		t.Fatalf("Scrub = %q, want %q", got, want)
	}
}

// Short secrets (a 4-character password) used to be left in errors. They are scrubbed where
// they stand as a whole token or field, and left inside longer words.
func TestShortSecretsAreScrubbedAsWholeTokens(t *testing.T) {
	for _, v := range []string{"pw1", "hunt", "x"} {
		s := New(v)
		defer s.Forget()
	}
	cases := map[string]string{
		`login failed: password "pw1" rejected`:       `login failed: password "[REDACTED]" rejected`,
		`pw1`:                                         `[REDACTED]`,
		`user=admin&password=pw1&next=pw12`:           `user=admin&password=[REDACTED]&next=pw12`,
		`{"password":"hunt"} hunter hunt. hunt_ahunt`: `{"password":"[REDACTED]"} hunter [REDACTED]. hunt_ahunt`,
		`apw1 pw1pw1 pw1-pw1`:                         `apw1 pw1pw1 [REDACTED]-[REDACTED]`,
		`box x-ray xx`:                                `box [REDACTED]-ray xx`,
		`pw1ü üpw1 (pw1)`:                             `pw1ü üpw1 ([REDACTED])`,
	}
	for in, want := range cases {
		if got := Scrub(in); got != want {
			t.Errorf("Scrub(%q) = %q, want %q", in, got, want)
		}
	}
}

// A secret inside a longer one does not cut the longer one apart (longest first).
func TestScrubLongestFirst(t *testing.T) {
	short, long := New("token-1"), New("prefix-token-1-suffix")
	defer short.Forget()
	defer long.Forget()
	if got := Scrub("x prefix-token-1-suffix y token-1"); got != "x [REDACTED] y [REDACTED]" {
		t.Fatalf("Scrub = %q", got)
	}
}

// Rotated credentials leave the scrubber: the set does not grow with every Vault token or OIDC
// access token. A value held by two Secrets stays until both are forgotten.
func TestForgetAndReplaceKeepTheSetSmall(t *testing.T) {
	before := Registered()
	tok := New("vault-token-0000")
	for i := 1; i <= 100; i++ {
		tok = Replace(tok, fmt.Sprintf("vault-token-%04d", i))
	}
	if n := Registered() - before; n != 1 {
		t.Fatalf("after 100 rotations the scrubber holds %d more values, want 1", n)
	}
	if Scrub("vault-token-0099") != "vault-token-0099" || Scrub("vault-token-0100") != Redacted {
		t.Fatalf("want only the current token scrubbed: %q %q", Scrub("vault-token-0099"), Scrub("vault-token-0100"))
	}
	same := New("vault-token-0100")
	tok.Forget()
	if Scrub("vault-token-0100") != Redacted {
		t.Fatal("a value still held by another Secret must stay scrubbed")
	}
	same.Forget()
	same.Forget() // extra Forget calls are harmless
	if Scrub("vault-token-0100") != "vault-token-0100" || Registered() != before {
		t.Fatalf("forgotten value still scrubbed, or %d values left (want %d)", Registered(), before)
	}
}

// Whatever happens, the set is bounded: the least recently registered values go first.
func TestScrubbedSetIsBounded(t *testing.T) {
	var held []Secret
	defer func() {
		for _, s := range held {
			s.Forget()
		}
	}()
	for i := 0; i < maxScrubbed+500; i++ {
		held = append(held, New(fmt.Sprintf("generated-password-%06d", i)))
	}
	if n := Registered(); n > maxScrubbed {
		t.Fatalf("scrubber holds %d values, want at most %d", n, maxScrubbed)
	}
	last := fmt.Sprintf("generated-password-%06d", maxScrubbed+499)
	if Scrub(last) != Redacted {
		t.Fatal("the newest value must be scrubbed")
	}
}

// A secret travels encoded: in a form body or a query (URL escaping), inside JSON (escaped
// quotes, backslashes, <, > and &), in a Basic header or a kubeconfig (base64). An upstream that
// echoes the request echoes those forms, and each is scrubbed like the raw value.
func TestScrubEncodedForms(t *testing.T) {
	cases := map[string][]string{
		`abc+def/ghi== "q" \ <b>&`: {
			`abc+def/ghi== "q" \ <b>&`,                     // raw
			`abc%2Bdef%2Fghi%3D%3D+%22q%22+%5C+%3Cb%3E%26`, // query / form escaping
			`abc%2bdef%2fghi%3d%3d+%22q%22+%5c+%3cb%3e%26`, // the same in lower-case hex
			`abc+def%2Fghi==%20%22q%22%20%5C%20%3Cb%3E&`,   // path escaping
			`abc+def/ghi== \"q\" \\ \u003cb\u003e\u0026`,   // JSON, HTML-escaped (Go's default)
			`abc+def/ghi== \"q\" \\ <b>&`,                  // JSON without HTML escaping
			`YWJjK2RlZi9naGk9PSAicSIgXCA8Yj4m`,             // base64
		},
		"k?>>~~": {"az8+Pn5+", "az8-Pn5-", "k%3F%3E%3E~~"}, // standard and URL alphabets
		"ab?":    {"YWI/", "YWI_", "ab%3F"},                // short: as whole tokens
		"tok1":   {"dG9rMQ==", "dG9rMQ"},                   // padded and not
	}
	for raw, encoded := range cases {
		s := New(raw)
		defer s.Forget()
		for _, form := range encoded {
			if got := Scrub("upstream said: " + form + " is wrong"); got != "upstream said: "+Redacted+" is wrong" {
				t.Errorf("Scrub left a form of %q: %q", raw, got)
			}
		}
	}
}

// The encoded forms leave with the value, except a form another held value also has.
func TestForgetDropsEncodedForms(t *testing.T) {
	before := Registered()
	a := New("a b c d e f") // query escaping: a+b+c+d+e+f
	b := New("a+b+c+d+e+f") // whose raw value is a's query form
	if Scrub("a+b+c+d+e+f a%20b%20c%20d%20e%20f") != Redacted+" "+Redacted {
		t.Fatalf("forms not scrubbed: %q", Scrub("a+b+c+d+e+f a%20b%20c%20d%20e%20f"))
	}
	a.Forget()
	if got := Scrub("a+b+c+d+e+f a%20b%20c%20d%20e%20f"); got != Redacted+" a%20b%20c%20d%20e%20f" {
		t.Fatalf("after forgetting a: %q (b's raw value must stay, a's path form must go)", got)
	}
	b.Forget()
	if got := Scrub("a+b+c+d+e+f YSBiIGMgZCBlIGY="); got != "a+b+c+d+e+f YSBiIGMgZCBlIGY=" || Registered() != before {
		t.Fatalf("forgotten forms still scrubbed: %q (%d values, want %d)", got, Registered(), before)
	}
}

func TestDecodeHook(t *testing.T) {
	str, sec := reflect.TypeOf(""), Type
	got, err := DecodeHook(str, sec, "hook-value-1234")
	if err != nil || got.(Secret).Reveal() != "hook-value-1234" {
		t.Fatalf("string into Secret: got %#v, %v", got, err)
	}
	if _, err := DecodeHook(reflect.TypeOf(1), sec, 1); err == nil || err.Error() != "expected a string, got int" {
		t.Fatalf("int into Secret: want an error naming the kind, got %v", err)
	}
	if got, err := DecodeHook(str, str, "plain"); err != nil || got != "plain" {
		t.Fatalf("string into string: want it unchanged, got %#v, %v", got, err)
	}
}
