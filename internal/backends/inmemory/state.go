package inmemory

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// Object is one resource's backend object.
type Object struct {
	ID           string              `json:"id"`
	ResourceUUID string              `json:"resource_uuid"`
	Description  string              `json:"description"`
	Limits       backends.Quantities `json:"limits"`
	Members      []string            `json:"members"`
	Paused       bool                `json:"paused"`
	Downscaled   bool                `json:"downscaled"`
	Created      time.Time           `json:"created"`
}

// Op is one entry of the operation log: every change the backend made.
type Op struct {
	Seq    int       `json:"seq"`
	Time   time.Time `json:"time"`
	Op     string    `json:"op"`
	ID     string    `json:"id"`
	Detail string    `json:"detail,omitempty"`
}

type state struct {
	Objects map[string]*Object `json:"objects"`
	Ops     []Op               `json:"ops"`
}

func newState() *state { return &state{Objects: map[string]*Object{}} }

func (st *state) log(op, id, detail string) {
	st.Ops = append(st.Ops, Op{Seq: len(st.Ops) + 1, Time: time.Now().UTC(), Op: op, ID: id, Detail: detail})
}

func (st *state) sortedObjects() []Object {
	out := make([]Object, 0, len(st.Objects))
	for _, o := range st.Objects {
		c := *o
		c.Limits = o.Limits.Clone()
		c.Members = append([]string(nil), o.Members...)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// read runs fn on the current state under the locks.
func (b *Backend) read(fn func(*state) error) error {
	return b.with(false, fn)
}

// write runs fn and persists the state when fn succeeds.
func (b *Backend) write(fn func(*state) error) error {
	return b.with(true, fn)
}

// with serialises access within the process (mutex) and, with a state file, across processes
// (flock on "<file>.lock"), re-reading the file first so every process sees the others' writes.
func (b *Backend) with(save bool, fn func(*state) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	path := b.settings.StateFile
	if path == "" {
		return fn(b.state)
	}
	unlock, err := lockFile(path+".lock", save)
	if err != nil {
		return failure.Transient(fmt.Errorf("lock state file: %w", err))
	}
	defer unlock()
	st, err := loadState(path)
	if err != nil {
		return err
	}
	b.state = st
	if err := fn(st); err != nil || !save {
		return err
	}
	return saveState(path, st)
}

func lockFile(path string, exclusive bool) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

func loadState(path string) (*state, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newState(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read state file: %w", err)
	}
	st := newState()
	if err := json.Unmarshal(data, st); err != nil {
		return nil, failure.Errorf("in-memory state file %s is corrupt: %v", path, err)
	}
	if st.Objects == nil {
		st.Objects = map[string]*Object{}
	}
	return st, nil
}

func saveState(path string, st *state) error {
	data, err := json.MarshalIndent(st, "", " ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("write state file: %w", err)
	}
	return os.Rename(tmp, path)
}
