package cli

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/agent"
	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/modes"
	"github.com/waldur/site-agent/internal/upstream"
)

// probe is one upstream of one offering: its checks, run in order under one deadline.
type probe struct {
	off      config.Offering
	seq      int    // position among the offering's probes (the order of the JSON document)
	upstream string // "waldur", "rancher", "keycloak", …
	run      func(ctx context.Context) []backends.Check
}

// result is what one probe found.
type result struct {
	probe  probe
	checks []backends.Check
	took   time.Duration
}

// grace is how long past its deadline a probe may take to return before it is reported as not
// answering (every client stops at the deadline; this bounds one that would not).
const grace = 500 * time.Millisecond

// runProbes runs every probe at once, each under its own deadline, and hands each result to emit
// as it arrives (emit is called from this goroutine only). Whatever the upstreams do, it returns
// within deadline + grace: a probe still running then is reported as not answering.
func runProbes(ctx context.Context, probes []probe, deadline time.Duration, emit func(result)) {
	results := make(chan result, len(probes))
	for _, p := range probes {
		go func() {
			start := time.Now()
			pctx, cancel := context.WithTimeout(upstream.Probing(ctx), deadline)
			defer cancel()
			done := make(chan []backends.Check, 1)
			go func() { done <- safeRun(pctx, p) }()
			timer := time.NewTimer(deadline + grace)
			defer timer.Stop()
			var checks []backends.Check
			select {
			case checks = <-done:
			case <-timer.C:
				checks = []backends.Check{{Name: p.upstream, Detail: fmt.Sprintf("no answer within the deadline of %s", deadline)}}
			}
			results <- result{probe: p, checks: checks, took: time.Since(start)}
		}()
	}
	for range probes {
		emit(<-results)
	}
}

// safeRun runs a probe; a panic is a failed check, not a crash of the whole report.
func safeRun(ctx context.Context, p probe) (checks []backends.Check) {
	defer func() {
		if r := recover(); r != nil {
			checks = append(checks, backends.Check{Name: p.upstream, Detail: fmt.Sprintf("check crashed: %v", r)})
		}
	}()
	return p.run(ctx)
}

// collectProbes lists the probes of every offering: Waldur's, and every upstream of every
// backend the offering's modes use (built as the agent builds them: the upstreams section, the
// secret store). closers are the backends to close afterwards.
func collectProbes(c *checked) (probes []probe, closers []backends.Closer) {
	reg := agent.Backends()
	for _, off := range c.cfg.Offerings {
		probes = append(probes, probe{off: off, seq: len(probes), upstream: upstream.Waldur, run: func(ctx context.Context) []backends.Check {
			return diagnoseWaldur(ctx, c.cfg, off, c.log)
		}})
		seen := map[string]bool{}
		for _, spec := range modes.Specs() {
			_, name := spec.BackendKey(off)
			if name == "" || seen[name] {
				continue
			}
			seen[name] = true
			ps, closer := backendProbes(reg, c.cfg, off, name, c.log)
			for _, p := range ps {
				p.seq = len(probes)
				probes = append(probes, p)
			}
			if closer != nil {
				closers = append(closers, closer)
			}
		}
	}
	return probes, closers
}

// backendProbes are the probes of one backend: its Diagnoser's, else a ping.
func backendProbes(reg *backends.Registry, cfg *config.Config, off config.Offering, name string, log *zap.Logger) ([]probe, backends.Closer) {
	set, err := agent.ProbeBackend(reg, cfg, off, name, log)
	if err != nil { // agent.Check passed, so this is unexpected; say so rather than skip it
		return []probe{{off: off, upstream: name, run: func(context.Context) []backends.Check {
			return []backends.Check{{Name: "backend " + name, Detail: err.Error()}}
		}}}, nil
	}
	var out []probe
	switch {
	case set.Diagnoser != nil:
		for _, p := range set.Diagnoser.Probes() {
			out = append(out, probe{off: off, upstream: p.Upstream, run: p.Run})
		}
	case set.Pinger != nil:
		out = append(out, probe{off: off, upstream: name, run: func(ctx context.Context) []backends.Check {
			err := set.Pinger.Ping(ctx)
			return []backends.Check{{Name: "backend " + name, OK: err == nil, Detail: "ping " + okText(err)}}
		}})
	}
	return out, set.Closer
}

func okText(err error) string {
	if err == nil {
		return "ok"
	}
	return "failed: " + err.Error()
}
