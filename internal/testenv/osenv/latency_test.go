package osenv_test

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// latencies records how long each named API call took, so the smoke test
// doubles as a rough performance baseline for the backend tests.
type latencies struct {
	mu    sync.Mutex
	calls []callTime
}

type callTime struct {
	name string
	took time.Duration
}

// do runs fn, records its duration under name and fails the test on error.
func (l *latencies) do(t testing.TB, name string, fn func() error) {
	t.Helper()
	start := time.Now()
	err := fn()
	took := time.Since(start)
	l.mu.Lock()
	l.calls = append(l.calls, callTime{name: name, took: took})
	l.mu.Unlock()
	if err != nil {
		t.Fatalf("%s (after %v): %v", name, took.Round(time.Millisecond), err)
	}
}

// table renders the calls in order, then the slowest and the total.
func (l *latencies) table() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	var total time.Duration
	for _, c := range l.calls {
		fmt.Fprintf(&b, "%8.1f ms  %s\n", ms(c.took), c.name)
		total += c.took
	}
	sorted := append([]callTime(nil), l.calls...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].took > sorted[j].took })
	if len(sorted) > 0 {
		fmt.Fprintf(&b, "calls: %d, total %.0f ms, mean %.1f ms, slowest %s (%.1f ms)\n",
			len(sorted), ms(total), ms(total)/float64(len(sorted)), sorted[0].name, ms(sorted[0].took))
	}
	return b.String()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func TestLatenciesTable(t *testing.T) {
	l := &latencies{}
	l.do(t, "fast", func() error { return nil })
	l.calls[0].took = 2 * time.Millisecond
	l.calls = append(l.calls, callTime{name: "slow", took: 8 * time.Millisecond})
	got := l.table()
	want := "     2.0 ms  fast\n     8.0 ms  slow\ncalls: 2, total 10 ms, mean 5.0 ms, slowest slow (8.0 ms)\n"
	if got != want {
		t.Errorf("table() =\n%s\nwant\n%s", got, want)
	}
}
