package telemetry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/waldur/site-agent/internal/secret"
)

type stringer string

func (s stringer) String() string { return string(s) }

type pair struct{ user, pass string }

func (p pair) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("user", p.user)
	enc.AddString("pass", p.pass)
	return nil
}

// Every way a value reaches the log — message, string, byte string, error, Stringer, string
// list, object, reflected map, logger context — is scrubbed before it is encoded, in its raw and
// encoded forms; numbers and the line's shape are kept.
func TestLoggerScrubsEverything(t *testing.T) {
	key := secret.New("token-x:s3cr3t-key-0001")
	defer key.Forget()
	pw := secret.New("pass+word/1==")
	defer pw.Forget()
	var buf bytes.Buffer
	log, err := NewLogger(&buf, "debug")
	if err != nil {
		t.Fatal(err)
	}
	echo := `400: {"Authorization": "Bearer token-x:s3cr3t-key-0001", "password": "pass%2Bword%2F1%3D%3D"}`
	log.With(zap.String("ctx", "token=token-x:s3cr3t-key-0001")).Error("upstream said "+echo,
		zap.String("body", echo),
		zap.ByteString("raw", []byte(echo)),
		zap.Error(errors.New(echo)),
		zap.NamedError("cause", errors.New("pass+word/1==")),
		zap.Stringer("url", stringer("https://u:pass%2Bword%2F1%3D%3D@host/")),
		zap.Strings("list", []string{"ok", "token-x:s3cr3t-key-0001"}),
		zap.Object("creds", pair{"admin", "pass+word/1=="}),
		zap.Any("map", map[string]any{"n": 7, "auth": "Basic " + "cGFzcyt3b3JkLzE9PQ=="}),
		zap.Int("count", 3))
	line := buf.String()
	for _, leak := range []string{"s3cr3t", "pass+word", "pass%2Bword", "cGFzcyt3b3JkLzE9PQ"} {
		if strings.Contains(line, leak) {
			t.Errorf("log line carries %q:\n%s", leak, line)
		}
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("not one JSON line: %v\n%s", err, line)
	}
	if m["count"] != float64(3) || m["map"].(map[string]any)["n"] != float64(7) || len(m["list"].([]any)) != 2 ||
		m["creds"].(map[string]any)["user"] != "admin" {
		t.Errorf("fields lost their shape: %v", m)
	}
	if !strings.Contains(m["error"].(string), secret.Redacted) || !strings.Contains(m["event"].(string), secret.Redacted) {
		t.Errorf("expected %s in the error and the message: %v", secret.Redacted, m)
	}
}

// Levels still filter: a scrubbing core does not write what its level leaves out.
func TestScrubCoreKeepsLevels(t *testing.T) {
	var buf bytes.Buffer
	log, err := NewLogger(&buf, "warn")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("hidden")
	log.Warn("shown")
	if out := buf.String(); strings.Contains(out, "hidden") || !strings.Contains(out, "shown") {
		t.Fatalf("levels not honoured: %s", out)
	}
}

// BenchmarkLogLine is the cost the scrubbing core adds to a typical line (five string fields,
// an error) with 20 credentials registered: compare with -bench against the plain JSON core.
func BenchmarkLogLine(b *testing.B) {
	for i := range 20 {
		s := secret.New(fmt.Sprintf("credential-%02d-abcdefghijklmnop", i))
		b.Cleanup(s.Forget)
	}
	for _, scrub := range []bool{false, true} {
		b.Run(fmt.Sprintf("scrub=%v", scrub), func(b *testing.B) {
			log, err := NewLogger(io.Discard, "info")
			if err != nil {
				b.Fatal(err)
			}
			if !scrub {
				log = zap.New(log.Core().(scrubCore).Core)
			}
			err = errors.New("rancher POST /v3/projects: HTTP 400: bad request")
			for b.Loop() {
				log.Info("order processed", zap.String("offering", "GPU pool"), zap.String("order", "0123456789abcdef"),
					zap.String("resource", "fedcba9876543210"), zap.String("backend", "rancher"), zap.String("state", "done"), zap.Error(err))
			}
		})
	}
}
