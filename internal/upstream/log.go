package upstream

import (
	"errors"
	"net/url"
	"strings"

	"go.uber.org/zap"
)

// leveled adapts zap to go-retryablehttp's LeveledLogger. Every message goes to debug level:
// the caller reports the final outcome. URLs are logged without their query, errors without
// the URL.
type leveled struct {
	log  *zap.Logger
	name string
}

func (l leveled) Error(msg string, kv ...any) { l.debug(msg, kv) }
func (l leveled) Warn(msg string, kv ...any)  { l.debug(msg, kv) }
func (l leveled) Info(string, ...any)         {}

// Debug keeps only the retry notices; "performing request" for every call would drown them.
func (l leveled) Debug(msg string, kv ...any) {
	if msg == "retrying request" {
		l.debug(msg, kv)
	}
}

func (l leveled) debug(msg string, kv []any) {
	switch {
	case l.name == "":
	case strings.Contains(msg, "request"):
		msg = strings.Replace(msg, "request", l.name+" request", 1) // "retrying waldur request"
	default:
		msg = l.name + ": " + msg
	}
	l.log.Debug(msg, fields(kv)...)
}

// fields turns retryablehttp's key/value pairs into zap fields.
func fields(kv []any) []zap.Field {
	out := make([]zap.Field, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		k, _ := kv[i].(string)
		if k == "timeout" {
			k = "wait" // retryablehttp's name for the backoff before the next attempt
		}
		switch v := kv[i+1].(type) {
		case string:
			if k == "url" || k == "request" {
				v = dropQuery(v)
			}
			out = append(out, zap.String(k, v))
		case error:
			var ue *url.Error
			if errors.As(v, &ue) {
				v = ue.Err
			}
			out = append(out, zap.NamedError(k, v))
		default:
			out = append(out, zap.Any(k, v))
		}
	}
	return out
}

// dropQuery removes the query of the URL in s ("GET https://h/p?q=1 (status: 503)").
func dropQuery(s string) string {
	before, after, ok := strings.Cut(s, "?")
	if !ok {
		return s
	}
	if _, rest, ok := strings.Cut(after, " "); ok {
		return before + " " + rest
	}
	return before
}
