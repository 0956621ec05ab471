package config

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/waldur/site-agent/internal/upstream"
)

// upstreamFields are the keys of one upstream's section.
var upstreamFields = []string{"timeout", "retries", "backoff_min", "backoff_max"}

// Bounds of the upstream settings.
const (
	maxUpstreamRetries = 10
	minAttemptTimeout  = 100 * time.Millisecond
	maxAttemptTimeout  = time.Hour
	maxBackoff         = time.Hour
)

// parseUpstreams reads the top-level `upstreams` section:
//
//	upstreams:
//	  waldur: {timeout: 30s, retries: 4, backoff_min: 250ms, backoff_max: 8s}
//	  rancher: {…}   kubernetes, keycloak, openstack, vault likewise
//
// Durations are Go durations ("30s") or numbers of seconds. Unknown upstreams and keys are
// warnings; invalid values an error naming the key.
func parseUpstreams(v any) (upstream.Upstreams, []string, Errors) {
	if v == nil {
		return nil, nil, nil
	}
	top, ok := asMap(v)
	if !ok {
		return nil, nil, Errors{{Key: "upstreams", Problem: "expected a mapping of upstream names (" + strings.Join(upstream.Names, ", ") + "), got " + describe(v)}}
	}
	out := upstream.Upstreams{}
	var warnings []string
	var errs Errors
	for _, name := range slices.Sorted(maps.Keys(top)) {
		if !slices.Contains(upstream.Names, name) {
			warnings = append(warnings, fmt.Sprintf("upstreams.%s: unknown upstream, ignored (known: %s)", name, strings.Join(upstream.Names, ", ")))
			continue
		}
		m, ok := asMap(top[name])
		if !ok {
			if top[name] == nil {
				continue
			}
			errs = append(errs, &Error{Key: "upstreams." + name, Problem: "expected a mapping with " + strings.Join(upstreamFields, ", ") + ", got " + describe(top[name])})
			continue
		}
		s, w, uerrs := parseUpstream("upstreams."+name+".", m)
		warnings = append(warnings, w...)
		errs = append(errs, uerrs...)
		out[name] = s
	}
	return out, warnings, errs
}

func parseUpstream(prefix string, m map[string]any) (upstream.Settings, []string, Errors) {
	r := newReader(m, prefix, "")
	var s upstream.Settings
	s.Timeout = r.duration("timeout")
	if r.has("retries") {
		n := r.integer("retries", 0)
		if n < 0 || n > maxUpstreamRetries {
			r.fail("retries", "must be between 0 and %d, got %d", maxUpstreamRetries, n)
		}
		s.Retries = &n
	}
	s.BackoffMin = r.duration("backoff_min")
	s.BackoffMax = r.duration("backoff_max")
	switch {
	case r.failed():
	case s.Timeout != 0 && (s.Timeout < minAttemptTimeout || s.Timeout > maxAttemptTimeout):
		r.fail("timeout", "must be between %s and %s, got %s", minAttemptTimeout, maxAttemptTimeout, s.Timeout)
	case s.BackoffMin > maxBackoff:
		r.fail("backoff_min", "must be at most %s, got %s", maxBackoff, s.BackoffMin)
	case s.BackoffMax > maxBackoff:
		r.fail("backoff_max", "must be at most %s, got %s", maxBackoff, s.BackoffMax)
	case s.BackoffMin > 0 && s.BackoffMax > 0 && s.BackoffMax < s.BackoffMin:
		r.fail("backoff_max", "must not be below backoff_min (%s), got %s", s.BackoffMin, s.BackoffMax)
	}
	return s, unknownWarnings(r.unknown()), r.errs
}

// duration reads a positive duration: a Go duration string ("30s", "250ms") or a number of
// seconds. Absent: zero.
func (r *reader) duration(key string) time.Duration {
	v, ok := r.get(key)
	if !ok {
		return 0
	}
	var d time.Duration
	var err error
	switch t := v.(type) {
	case string:
		if f, ferr := strconv.ParseFloat(strings.TrimSpace(t), 64); ferr == nil {
			d = seconds(f)
		} else {
			d, err = time.ParseDuration(strings.TrimSpace(t))
		}
	case int, int64, uint64, float64:
		d = seconds(r.float(key, 0))
	default:
		err = fmt.Errorf("not a duration")
	}
	if err != nil || d <= 0 {
		r.fail(key, "expected a positive duration such as 30s or 250ms (or a number of seconds), got %s", describe(v))
		return 0
	}
	return d
}

func seconds(f float64) time.Duration {
	if math.IsNaN(f) || f <= 0 || f > float64(maxAttemptTimeout/time.Second)*10 {
		return -1
	}
	return time.Duration(f * float64(time.Second))
}

// upstreamEnv maps SITE_AGENT_UPSTREAMS_<NAME>_<KEY> (lower-cased, prefix removed) to the key
// path of the upstreams section ("" when it names no upstream setting).
func upstreamEnv(key string) string {
	rest, ok := strings.CutPrefix(key, "upstreams_")
	if !ok {
		return ""
	}
	for _, name := range upstream.Names {
		if field, ok := strings.CutPrefix(rest, name+"_"); ok && slices.Contains(upstreamFields, field) {
			return "upstreams" + delim + name + delim + field
		}
	}
	return ""
}

// withVaultUpstream returns the vault section with upstreams.vault filled in where the section
// sets nothing itself (its timeout, max_retries, backoff_min and backoff_max win), so the
// resolver and the secrets store, which read only their section, see one set of settings.
func withVaultUpstream(section map[string]any, s upstream.Settings) map[string]any {
	out := make(map[string]any, len(section)+4)
	for k, v := range section {
		out[k] = v
	}
	fill := func(key string, v any, set bool) {
		if _, has := out[key]; !has && set {
			out[key] = v
		}
	}
	fill("timeout", s.Timeout.String(), s.Timeout > 0)
	if s.Retries != nil {
		fill("max_retries", *s.Retries, true)
	}
	fill("backoff_min", s.BackoffMin.String(), s.BackoffMin > 0)
	fill("backoff_max", s.BackoffMax.String(), s.BackoffMax > 0)
	return out
}
