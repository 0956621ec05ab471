package telemetry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Heartbeat is the incumbent's liveness file: its modification time says the agent's process is
// alive (the runner beats it on a ticker of its own, so a long backend call does not make it
// stale); its content is the Unix time as a float. Touch is cheap and rate-limited.
type Heartbeat struct {
	path string
	mu   sync.Mutex
	last time.Time
	now  func() time.Time
}

// NewHeartbeat returns a heartbeat writing to path ("" disables the file).
func NewHeartbeat(path string) *Heartbeat { return NewHeartbeatClock(path, time.Now) }

// NewHeartbeatClock is NewHeartbeat with the clock that stamps beats (tests).
func NewHeartbeatClock(path string, now func() time.Time) *Heartbeat {
	return &Heartbeat{path: path, now: now}
}

// Path is the file written.
func (h *Heartbeat) Path() string { return h.path }

// Last is when Touch last ran.
func (h *Heartbeat) Last() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// Touch records liveness; writes at most once a second.
func (h *Heartbeat) Touch() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if now := h.now(); now.Sub(h.last) >= time.Second {
		h.write(now)
	}
}

// Beat records liveness now, whatever the rate: for a ticker that is the only writer.
func (h *Heartbeat) Beat() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.write(h.now())
}

// write updates the file atomically. Callers hold h.mu.
func (h *Heartbeat) write(now time.Time) {
	h.last = now
	if h.path == "" {
		return
	}
	_ = replaceFile(h.path, fmt.Sprintf("%.6f", float64(now.UnixNano())/1e9))
}

// replaceFile writes data to a new file of its own in path's directory (os.CreateTemp: an
// unpredictable name, created exclusively, mode 0600) and renames it over path. A fixed name
// such as <path>.tmp would follow a symlink another local user planted there (the default path
// is in /tmp) and overwrite the file it points to; rename replaces a link at path itself
// rather than writing through it.
func replaceFile(path, data string) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.WriteString(data)
	// Readable by all, like the incumbent's file: a healthcheck may run as another user.
	if err := errors.Join(werr, f.Chmod(0o644), f.Close()); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// CheckFile reports an error unless the file at path was modified within maxAge.
func CheckFile(path string, maxAge time.Duration, now time.Time) error {
	st, err := os.Stat(filepath.Clean(path))
	if err != nil {
		return fmt.Errorf("heartbeat file %s: %w", path, err)
	}
	if age := now.Sub(st.ModTime()); age > maxAge {
		return fmt.Errorf("heartbeat file %s is %s old (limit %s)", path, age.Round(time.Second), maxAge)
	}
	return nil
}
