package nodeemu

import (
	"context"
	"encoding/base64"
	"strconv"
	"sync"
	"time"
)

// etcdWriter keeps writing a key every writeEvery while a member lives, through any live member
// (as clientv3 fails over between endpoints). A run of failed writes may last one election —
// maxOutage: etcd waits up to twice the election timeout before a follower stands, then the
// vote, then a write attempt's own timeout — a longer one is a problem: the cluster lost its
// quorum, or its leader for longer than an election.
type etcdWriter struct {
	e *EtcdProcs

	mu          sync.Mutex
	running     bool
	stopc       chan struct{}
	done        chan struct{}
	ok, failed  int
	outageStart time.Time // zero: the last write succeeded
	lastErr     string
}

const (
	writeEvery = 100 * time.Millisecond
	maxOutage  = 4 * etcdElectionMS * time.Millisecond
)

func newEtcdWriter(e *EtcdProcs) *etcdWriter { return &etcdWriter{e: e} }

// start starts writing (once).
func (w *etcdWriter) start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running {
		return
	}
	w.running, w.stopc, w.done = true, make(chan struct{}), make(chan struct{})
	go w.loop(w.stopc, w.done)
}

func (w *etcdWriter) stop() {
	w.mu.Lock()
	running, stopc, done := w.running, w.stopc, w.done
	w.running = false
	w.mu.Unlock()
	if running {
		close(stopc)
		<-done
	}
}

func (w *etcdWriter) loop(stop, done chan struct{}) {
	defer close(done)
	key := base64.StdEncoding.EncodeToString([]byte("/nodeemu/writer"))
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-time.After(writeEvery):
		}
		clients := w.e.liveClients("")
		if len(clients) == 0 {
			w.record(nil, true) // no machine runs etcd: nothing to write to
			continue
		}
		val := base64.StdEncoding.EncodeToString([]byte(strconv.Itoa(i)))
		var err error
		for _, c := range clients {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			err = gateway(ctx, w.e.hc, c, "/v3/kv/put", map[string]string{"key": key, "value": val}, nil)
			cancel()
			if err == nil {
				break
			}
		}
		w.record(err, false)
	}
}

// record counts a write; idle: nothing runs (an outage ends without a verdict).
func (w *etcdWriter) record(err error, idle bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case idle:
		w.outageStart = time.Time{}
	case err == nil:
		w.ok++
		w.endOutageLocked(time.Now())
	default:
		w.failed++
		w.lastErr = err.Error()
		if w.outageStart.IsZero() {
			w.outageStart = time.Now()
		}
	}
}

// endOutageLocked closes a run of failed writes, a problem when it outlasted one election.
func (w *etcdWriter) endOutageLocked(now time.Time) {
	if w.outageStart.IsZero() {
		return
	}
	if d := now.Sub(w.outageStart); d > maxOutage {
		w.e.problem("etcd writes failed for %s (more than one election, %s): %s", d.Round(time.Millisecond), maxOutage, w.lastErr)
	}
	w.outageStart = time.Time{}
}

// check reports an outage still going on for longer than one election (once per outage).
func (w *etcdWriter) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.outageStart.IsZero() && time.Since(w.outageStart) > maxOutage {
		w.endOutageLocked(time.Now())
	}
}

func (w *etcdWriter) counts() (ok, failed int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ok, w.failed
}
