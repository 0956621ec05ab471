package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// prevRelease is the build the launch group measures beside this one: `git tag` held no release
// tag when the release binary was slimmed (issue 20 item 7: status page and --version without a
// Go template), so the previous release is main's HEAD at that time, the parent of the first
// commit of that work. Once there are release tags, set it to the newest one. It is built from
// git (git archive into a temporary directory, `make build`'s flags without the stamps) and
// cached by commit in $XDG_CACHE_HOME/site-agent/prev-release/<commit>/site-agent (~/.cache).
const prevRelease = "24561ad3a8bd06cf83a4a7b2cdfb0f3178f5ed9e"

// launchRuns is how many launches each binary gets; idleSamples how many VmRSS reads once idle,
// idleSettle how long it has been idle before the first read: the steady state, after several
// idle garbage collections (read 1–3 s after start, the figure was ≈ 3.5 MiB lower, before the
// first collection had grown the heap to its goal).
const (
	launchRuns  = 20
	idleSamples = 10
	idleSettle  = 30 * time.Second
)

// footprint is what the launch group measures of one binary.
type footprint struct {
	launches []time.Duration // launch → first Waldur request, sorted
	idle     []float64       // VmRSS once idle, MiB, sorted
	anon     float64         // RssAnon at the median sample, MiB
	file     float64         // RssFile at the median sample, MiB
	peak     float64         // VmHWM at the end, MiB
	size     int64           // bytes of the binary
}

// figureLaunch: the agent in order_process with the incumbent-style Rancher + Keycloak
// configuration of two offerings (the second with a GPU pool), against the simulators. Launch →
// the first request to Waldur (median and max of launchRuns, the two binaries launched in
// turn), and the idle RSS: VmRSS sampled idleSamples times, 200 ms apart, after idleSettle of
// idle cycles of both offerings (--period 300ms, no orders), median reported. This build and the
// previous release run against the same simulators, one after the other.
func figureLaunch(b *testing.B, bin string, t *table) {
	ck := newClock()
	waldurOnly := func(name string, h http.Handler) http.Handler {
		if name == "waldur" {
			return ck.wrap(name, h)
		}
		return h
	}
	e := startRancherSims(b, nil, waldursim.Options{ValidateResponses: waldursim.Bool(false)}, waldurOnly)
	e.writeRancherConfig(true)
	prev, prevErr := buildPrevRelease(b)
	bins := []string{bin}
	if prevErr == nil {
		bins = append(bins, prev)
	}
	fp := make([]footprint, len(bins))
	for i := 0; i < launchRuns; i++ {
		for j, path := range bins {
			fp[j].launches = append(fp[j].launches, launchOnce(b, ck, path, e.config))
		}
	}
	for j, path := range bins {
		slices.Sort(fp[j].launches)
		measureIdle(b, e, path, &fp[j])
	}
	cur, was := fp[0], "previous release "+prevRelease[:7]+": "
	if prevErr != nil { // one line in the table, the whole error in the log
		b.Logf("previous release %s not measured: %v", prevRelease[:7], prevErr)
		reason, _, _ := strings.Cut(prevErr.Error(), "\n")
		was = "previous release " + prevRelease[:7] + " not measured: " + reason[:min(len(reason), 120)]
	}
	launch := func(f footprint) string {
		return msText(f.launches[len(f.launches)/2]) + " / " + msText(f.launches[len(f.launches)-1])
	}
	idle := func(f footprint) string {
		return fmt.Sprintf("%.1f MiB (%.1f + %.1f; samples %.1f–%.1f; peak %.1f)", f.idle[len(f.idle)/2], f.anon, f.file, f.idle[0], f.idle[len(f.idle)-1], f.peak)
	}
	size := func(f footprint) string { return fmt.Sprintf("%.1f MB", float64(f.size)/1e6) }
	row := func(figure string, show func(footprint) string, target string) {
		v := show(cur)
		if prevErr == nil {
			v += "; " + was + show(fp[1])
		} else {
			v += "; " + was
		}
		t.add(figure, v, target)
	}
	row(fmt.Sprintf("launch → first Waldur request, order_process, Rancher + Keycloak, 2 offerings (one GPU pool): median / max of %d", launchRuns), launch, "≤ 20 ms")
	row(fmt.Sprintf("idle RSS, same configuration, after %s of idle cycles: VmRSS median of %d (anonymous + file-backed; range; peak)", idleSettle, idleSamples), idle, "≤ 20 MiB")
	row("release binary (static, stripped)", size, "")
	t.metric(float64(cur.launches[len(cur.launches)/2].Microseconds())/1000, "ms-launch-median")
	t.metric(cur.idle[len(cur.idle)/2], "MiB-RSS-idle")
}

// launchOnce starts the binary, waits for its first Waldur request and kills it.
func launchOnce(b *testing.B, ck *clock, bin, config string) time.Duration {
	ck.reset()
	time.Sleep(50 * time.Millisecond) // let the previous process's exit settle
	cmd := exec.Command(bin, "-m", "order_process", "-c", config, "--period", "1h")
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	select {
	case <-ck.arrived:
	case <-time.After(10 * time.Second):
		b.Fatalf("%s: no Waldur request within 10 s of launch", bin)
	}
	first, _, _ := ck.times()
	return first.Sub(start)
}

// measureIdle runs the binary until both offerings have had three idle cycles and idleSettle
// has passed, then samples its VmRSS.
func measureIdle(b *testing.B, e *rancherEnv, bin string, f *footprint) {
	st, err := os.Stat(bin)
	if err != nil {
		b.Fatal(err)
	}
	f.size = st.Size()
	base := e.sim.Calls()["marketplace_orders_list"]
	cmd := exec.Command(bin, "-m", "order_process", "-c", e.config, "--period", "300ms")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	started := time.Now()
	waitFor(b, 30*time.Second, "three idle cycles", func() bool { return e.sim.Calls()["marketplace_orders_list"] >= base+6 })
	time.Sleep(time.Until(started.Add(idleSettle)))
	type sample struct{ rss, anon, file float64 }
	var samples []sample
	for i := 0; i < idleSamples; i++ {
		time.Sleep(200 * time.Millisecond)
		v := procStatus(b, cmd.Process.Pid, "VmRSS", "RssAnon", "RssFile")
		samples = append(samples, sample{v[0], v[1], v[2]})
	}
	f.peak = procStatus(b, cmd.Process.Pid, "VmHWM")[0]
	slices.SortFunc(samples, func(x, y sample) int { return int((x.rss - y.rss) * 1024) })
	for _, s := range samples {
		f.idle = append(f.idle, s.rss)
	}
	med := samples[len(samples)/2]
	f.anon, f.file = med.anon, med.file
}

// buildPrevRelease builds prevRelease once per machine (see there); an error says why it
// could not (no git, a shallow clone without the commit): the table says so and goes on.
func buildPrevRelease(b *testing.B) (string, error) {
	b.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "site-agent", "prev-release", prevRelease)
	bin := filepath.Join(dir, "site-agent")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("not in a git checkout: %w", err)
	}
	src, tarball := b.TempDir(), filepath.Join(b.TempDir(), "src.tar")
	for _, args := range [][]string{{"git", "-C", strings.TrimSpace(string(top)), "archive", "-o", tarball, prevRelease}, {"tar", "-xf", tarball, "-C", src}} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("%s %s: %w: %s", args[0], args[3], err, strings.TrimSpace(string(out)))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp := bin + ".tmp"
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", tmp, "./cmd/site-agent")
	build.Dir, build.Env = src, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %w: %s", prevRelease[:7], err, tail(string(out)))
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", errors.Join(err, os.Remove(tmp))
	}
	return bin, nil
}
