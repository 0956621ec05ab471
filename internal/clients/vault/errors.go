package vault

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/hashicorp/vault/api"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
)

// opError is a failure with a message written for operators; the cause stays in the chain for
// errors.Is/As (failure.StatusError, network errors, context errors).
type opError struct {
	msg   string
	cause error
}

func (e *opError) Error() string { return e.msg }
func (e *opError) Unwrap() error { return e.cause }

// wrapErr describes err after a formatted context ("reading secret/site/x"). Vault's 5xx and
// 429 answers and network failures are marked transient; the text is scrubbed of known secrets.
func wrapErr(err error, format string, args ...any) error {
	var described *opError
	if errors.As(err, &described) {
		return err // a login failure, already described and classified
	}
	msg := fmt.Sprintf(format, args...)
	var re *api.ResponseError
	if errors.As(err, &re) {
		se := statusError(re)
		e := &opError{msg: secret.Scrub(msg + ": " + describeStatus(re)), cause: se}
		if se.Temporary() {
			return failure.Transient(e)
		}
		return e
	}
	e := &opError{msg: secret.Scrub(msg + ": " + describeCause(err)), cause: err}
	if failure.IsTransient(err) {
		return failure.Transient(e)
	}
	return e
}

func statusError(re *api.ResponseError) *failure.StatusError {
	return &failure.StatusError{Service: "vault", Method: re.HTTPMethod, Path: urlPath(re.URL), Code: re.StatusCode,
		Body: secret.Scrub(vaultErrors(re))}
}

// vaultErrors joins Vault's error strings, dropping the "1 error occurred: * " framing of its
// multi-errors.
func vaultErrors(re *api.ResponseError) string {
	parts := make([]string, 0, len(re.Errors))
	for _, e := range re.Errors {
		e = multiErrorHeader.ReplaceAllString(strings.TrimSpace(e), "")
		for _, line := range strings.Split(e, "\n") {
			if line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "*")); line != "" {
				parts = append(parts, line)
			}
		}
	}
	return excerpt(strings.Join(parts, "; "))
}

var multiErrorHeader = regexp.MustCompile(`^\d+ errors? occurred:\s*`)

func describeStatus(re *api.ResponseError) string {
	detail := vaultErrors(re)
	switch re.StatusCode {
	case http.StatusForbidden:
		return "permission denied (HTTP 403" + prefixed(": ", detail) + "; the token's policies do not allow this path, or the token expired or was revoked)"
	case http.StatusNotFound:
		return "not found (HTTP 404)"
	}
	if detail == "" {
		return fmt.Sprintf("HTTP %d", re.StatusCode)
	}
	return fmt.Sprintf("HTTP %d: %s", re.StatusCode, detail)
}

func prefixed(prefix, s string) string {
	if s == "" || s == "permission denied" {
		return ""
	}
	return prefix + s
}

// isStatus reports whether err is Vault's raw answer with the given HTTP status to the request
// itself. A described failure (a login refused with 403 before the request was sent) is not.
func isStatus(err error, code int) bool {
	var described *opError
	if errors.As(err, &described) {
		return false
	}
	var re *api.ResponseError
	return errors.As(err, &re) && re.StatusCode == code
}

func urlPath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Path // never the query
}

func excerpt(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const max = 300
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// describeCause returns the most useful text of a failure that is not a Vault answer: the
// network operation (dial tcp 127.0.0.1:8200: connect: connection refused), the innermost
// cause of a URL error (TLS, timeouts), or the error itself. The api and auth modules wrap
// failures in text that repeats the method and URL.
func describeCause(err error) string {
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return rootCause(err).Error()
}

// rootCause returns the innermost error.
func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}
