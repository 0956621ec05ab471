package secret

import (
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
)

// Redacted is what a Secret prints as.
const Redacted = "[REDACTED]"

// Secret is a sensitive string. Only Reveal returns its value; every formatting and encoding path
// prints Redacted. The zero value is an empty secret.
type Secret struct{ v string }

// New wraps a value and registers it with the process-wide scrubber (see Scrub).
func New(v string) Secret {
	register(v)
	return Secret{v: v}
}

// Reveal returns the value, for the single place that puts it on the wire.
func (s Secret) Reveal() string { return s.v }

// IsZero reports whether the secret is empty.
func (s Secret) IsZero() bool { return s.v == "" }

// String implements fmt.Stringer.
func (s Secret) String() string {
	if s.v == "" {
		return ""
	}
	return Redacted
}

// GoString implements fmt.GoStringer (%#v).
func (s Secret) GoString() string { return s.String() }

// Format implements fmt.Formatter so every verb (%v %s %q %x %d …) redacts.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		fmt.Fprintf(f, "%q", s.String())
		return
	}
	fmt.Fprint(f, s.String())
}

// MarshalJSON implements json.Marshaler.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + s.String() + `"`), nil }

// MarshalText implements encoding.TextMarshaler (used by YAML and zap).
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// LogValue implements slog.LogValuer.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// Type is reflect.Type of Secret, for decode hooks.
var Type = reflect.TypeOf(Secret{})

var (
	mu     sync.RWMutex
	values = map[string]struct{}{}
)

// minScrubLen avoids scrubbing short values (e.g. "admin") that would mangle ordinary text.
const minScrubLen = 6

func register(v string) {
	if len(v) < minScrubLen {
		return
	}
	mu.Lock()
	values[v] = struct{}{}
	mu.Unlock()
}

// Scrub replaces every known secret value in text with Redacted. It is the last line of
// defence for text that leaves the process (errors sent to Waldur, log messages): an upstream
// that echoes a credential back in an error body cannot leak it.
func Scrub(text string) string {
	mu.RLock()
	defer mu.RUnlock()
	for v := range values {
		if strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, Redacted)
		}
	}
	return text
}
