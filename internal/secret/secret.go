package secret

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Redacted is what a Secret prints as.
const Redacted = "[REDACTED]"

// Secret is a sensitive string. Only Reveal returns its value; every formatting and encoding path
// prints Redacted. The zero value is an empty secret.
type Secret struct{ v string }

// New wraps a value and registers it with the process-wide scrubber (see Scrub); the owner of
// a value that rotates calls Forget (or Replace) when it is replaced.
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

// DecodeHook is a mapstructure decode hook (its DecodeHookFuncType): a string decoded into a
// Secret field becomes New(string); any other kind is an error; values for other types pass.
func DecodeHook(from, to reflect.Type, data any) (any, error) {
	if to != Type {
		return data, nil
	}
	if from.Kind() != reflect.String {
		return nil, fmt.Errorf("expected a string, got %s", from.Kind())
	}
	return New(data.(string)), nil
}

// The scrubber's registry: every value New registered and not yet forgotten, with how many
// Secrets hold it, and the forms (the value and its encodings, see forms) it is scrubbed in. It
// is bounded: past maxScrubbed values, the least recently registered one goes (values that rotate
// are forgotten by their owners long before; see Forget).
var (
	mu      sync.RWMutex
	values  = map[string]*entry{}
	inUse   = map[string]int{} // form → how many registered values have it
	ordered []string           // the forms, longest first: a secret inside a longer one is not cut apart
	counter uint64
)

type entry struct {
	refs  int
	seq   uint64 // when it was last registered
	forms []string
}

const (
	// maxScrubbed bounds the registry.
	maxScrubbed = 4096
	// wholeTokenBelow: shorter values (e.g. a 4-character password) are scrubbed only where they
	// stand as a whole token, so they do not mangle ordinary words that contain them.
	wholeTokenBelow = 6
)

func register(v string) {
	if v == "" {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	counter++
	if e := values[v]; e != nil {
		e.refs++
		e.seq = counter
		return
	}
	if len(values) >= maxScrubbed {
		evictOldest()
	}
	e := &entry{refs: 1, seq: counter, forms: forms(v)}
	values[v] = e
	for _, f := range e.forms {
		if inUse[f]++; inUse[f] == 1 {
			at := sort.Search(len(ordered), func(i int) bool { return len(ordered[i]) < len(f) })
			ordered = slices.Insert(ordered, at, f)
		}
	}
}

// forms are the ways a value appears in text that leaves the process: as it is, URL-encoded
// (query and path escaping, with upper- and lower-case hex), JSON-escaped (with and without
// HTML escaping) and base64 (standard and URL alphabets, padded and not). An OIDC client secret
// abc+def/ghi== travels as abc%2Bdef%2Fghi%3D%3D in a form body, and an upstream that echoes
// the request shows it that way.
func forms(v string) []string {
	out := []string{v}
	add := func(f string) {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	for _, f := range []string{url.QueryEscape(v), url.PathEscape(v)} {
		add(f)
		add(lowerHex(f))
	}
	add(jsonEscaped(v, true))
	add(jsonEscaped(v, false))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		add(enc.EncodeToString([]byte(v)))
	}
	return out
}

// lowerHex rewrites the %XX escapes of a URL-encoded string in lower case (%2b), which some
// encoders write.
func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lowerByte(b[i+1]), lowerByte(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// jsonEscaped is v as it appears inside a JSON string (without the quotes).
func jsonEscaped(v string, html bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	s := strings.TrimSuffix(b.String(), "\n")
	return strings.TrimSuffix(strings.TrimPrefix(s, `"`), `"`)
}

func evictOldest() {
	oldest, at := "", uint64(0)
	for v, e := range values {
		if oldest == "" || e.seq < at {
			oldest, at = v, e.seq
		}
	}
	unregister(oldest)
}

// unregister drops v and the forms no other value has from the registry. Callers hold mu.
func unregister(v string) {
	e := values[v]
	if e == nil {
		return
	}
	delete(values, v)
	for _, f := range e.forms {
		if inUse[f]--; inUse[f] > 0 {
			continue
		}
		delete(inUse, f)
		if i := slices.Index(ordered, f); i >= 0 {
			ordered = slices.Delete(ordered, i, i+1)
		}
	}
}

// Forget tells the scrubber this Secret is no longer held (a rotated token, a password no
// longer in use). The value stops being scrubbed once every New of it has been forgotten. Call
// it once per New.
func (s Secret) Forget() {
	if s.v == "" {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	e := values[s.v]
	if e == nil {
		return
	}
	if e.refs--; e.refs <= 0 {
		unregister(s.v)
	}
}

// Replace returns New(v) and forgets old: for a credential that rotates (a renewed token).
func Replace(old Secret, v string) Secret {
	s := New(v)
	old.Forget()
	return s
}

// Registered is how many distinct values the scrubber holds.
func Registered() int {
	mu.RLock()
	defer mu.RUnlock()
	return len(values)
}

// Scrub replaces every known secret value, and its URL-encoded, JSON-escaped and base64 forms,
// in text with Redacted. It is the last line of defence for text that leaves the process (errors
// sent to Waldur, log messages): an upstream that echoes a credential back in an error body
// cannot leak it. Forms shorter than 6 characters are replaced where they stand as a whole
// token (not inside a longer word).
func Scrub(text string) string {
	mu.RLock()
	defer mu.RUnlock()
	for _, v := range ordered {
		if !strings.Contains(text, v) {
			continue
		}
		if len(v) >= wholeTokenBelow {
			text = strings.ReplaceAll(text, v, Redacted)
		} else {
			text = replaceTokens(text, v)
		}
	}
	return text
}

// replaceTokens replaces the occurrences of v that no letter, digit or underscore touches.
func replaceTokens(text, v string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], v)
		if j < 0 {
			break
		}
		start, end := i+j, i+j+len(v)
		before, _ := utf8.DecodeLastRuneInString(text[:start]) // RuneError (no word) at the start
		after, _ := utf8.DecodeRuneInString(text[end:])
		if isWord(before) || isWord(after) {
			i = start + 1
			continue
		}
		b.WriteString(text[last:start])
		b.WriteString(Redacted)
		last, i = end, end
	}
	b.WriteString(text[last:])
	return b.String()
}

func isWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
