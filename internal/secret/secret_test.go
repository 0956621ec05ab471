package secret

import (
	"encoding/json"
	"fmt"
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
	New("abcdef-123456")
	New("short") // below the scrub threshold: never matched
	got := Scrub(`upstream said: token "abcdef-123456" is invalid; short words stay`)
	want := `upstream said: token "[REDACTED]" is invalid; short words stay`
	if got != want {
		t.Fatalf("Scrub = %q, want %q", got, want)
	}
}
