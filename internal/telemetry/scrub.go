package telemetry

import (
	"bytes"
	"encoding/json"
	"fmt"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/waldur/site-agent/internal/secret"
)

// scrubCore passes every log entry through secret.Scrub before the encoder sees it: the message,
// the stack, and every string a field carries (strings, byte strings, errors, Stringers, and the
// strings inside objects, arrays and reflected values). It is the one place every log line
// passes, so a credential an upstream echoed in an error body (a Rancher gateway answering 400
// with the request's Authorization header, Keystone echoing the password) is redacted whichever
// client or backend logged it.
type scrubCore struct{ zapcore.Core }

// newScrubCore wraps core so that nothing it writes carries a registered secret.
func newScrubCore(core zapcore.Core) zapcore.Core { return scrubCore{core} }

func (c scrubCore) With(fields []zapcore.Field) zapcore.Core {
	return scrubCore{c.Core.With(scrubFields(fields))}
}

// Check adds this core, not the wrapped one, so Write below runs.
func (c scrubCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c scrubCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	e.Message = secret.Scrub(e.Message)
	e.Stack = secret.Scrub(e.Stack)
	return c.Core.Write(e, scrubFields(fields))
}

func scrubFields(fields []zapcore.Field) []zapcore.Field {
	out := make([]zapcore.Field, 0, len(fields))
	for _, f := range fields {
		out = append(out, scrubField(f)...)
	}
	return out
}

// scrubField returns f with every string in it scrubbed (one field, or for an inline object the
// fields it adds).
func scrubField(f zapcore.Field) []zapcore.Field {
	switch f.Type {
	case zapcore.StringType:
		f.String = secret.Scrub(f.String)
	case zapcore.ByteStringType:
		if b, ok := f.Interface.([]byte); ok {
			f.Interface = []byte(secret.Scrub(string(b)))
		}
	case zapcore.ErrorType:
		if err, ok := f.Interface.(error); ok && err != nil {
			return []zapcore.Field{zap.String(f.Key, secret.Scrub(safeText(err.Error)))}
		}
	case zapcore.StringerType:
		if s, ok := f.Interface.(fmt.Stringer); ok && s != nil {
			return []zapcore.Field{zap.String(f.Key, secret.Scrub(safeText(s.String)))}
		}
	case zapcore.ReflectType, zapcore.ObjectMarshalerType, zapcore.ArrayMarshalerType, zapcore.InlineMarshalerType:
		return scrubStructured(f)
	}
	return []zapcore.Field{f}
}

// scrubStructured encodes a structured field as zap would (its JSON), and when the JSON holds
// a secret in any form, decodes it and scrubs every key and string in it.
func scrubStructured(f zapcore.Field) []zapcore.Field {
	enc := zapcore.NewMapObjectEncoder()
	f.AddTo(enc)
	raw, err := json.Marshal(enc.Fields)
	if err != nil {
		return []zapcore.Field{zap.String(f.Key, secret.Scrub(fmt.Sprintf("%+v", enc.Fields)))}
	}
	if secret.Scrub(string(raw)) == string(raw) {
		return []zapcore.Field{f}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil {
		return []zapcore.Field{zap.String(f.Key, secret.Scrub(string(raw)))}
	}
	out := make([]zapcore.Field, 0, len(top))
	for k, v := range top {
		out = append(out, zap.Reflect(secret.Scrub(k), scrubValue(v)))
	}
	return out
}

// scrubValue scrubs the strings of a decoded JSON value (json.Number stays a number).
func scrubValue(v any) any {
	switch x := v.(type) {
	case string:
		return secret.Scrub(x)
	case []any:
		for i := range x {
			x[i] = scrubValue(x[i])
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[secret.Scrub(k)] = scrubValue(e)
		}
		return out
	}
	return v
}

// safeText calls a String or Error method that may panic on a nil receiver, as zap does.
func safeText(fn func() string) (s string) {
	defer func() {
		if r := recover(); r != nil {
			s = fmt.Sprintf("<PANIC=%v>", r)
		}
	}()
	return fn()
}
