package vclusters

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// Status is where a virtual cluster is in its life.
type Status string

// Statuses, in order; StatusError carries a reason and is retried.
const (
	StatusCreating   Status = "creating"   // tenant namespace, proxy, Nodes and Pods being made
	StatusReady      Status = "ready"      // tenant in place; importing into Rancher
	StatusConnecting Status = "connecting" // imported; tunnels opening (or reopening)
	StatusConnected  Status = "connected"  // the agent session is up
	StatusError      Status = "error"      // the last attempt failed (Reason); retried with backoff
	StatusDeleting   Status = "deleting"
)

// Step is the last setup step a cluster completed (setup resumes after a restart; every step is
// idempotent, so it simply runs again from the start).
type Step string

// Setup steps.
const (
	StepNone     Step = ""
	StepTenant   Step = "tenant"   // namespace, Nodes (with status) and Pods exist
	StepImported Step = "imported" // Rancher cluster created and its manifest applied
)

// Record is what the state file keeps of a cluster. It holds no secrets: tokens are read again
// from the main API server after a restart.
type Record struct {
	Name       string    `json:"name"`
	ID         string    `json:"id"` // local id, the cluster-id label
	Status     Status    `json:"status"`
	Reason     string    `json:"reason,omitempty"`
	Step       Step      `json:"step,omitempty"`
	RancherID  string    `json:"rancherClusterId,omitempty"`
	ProxyPort  int       `json:"proxyPort,omitempty"`
	Registered bool      `json:"registered,omitempty"` // the agent connected once (/v3/connect, not /register)
	CreatedAt  time.Time `json:"createdAt"`
	// Nodes and Pods are the cluster's size (the template's at create, then POST …/scale);
	// NotReady how many of its last Nodes are told to stop heartbeating (POST …/chaos).
	Nodes    int `json:"nodes,omitempty"`
	Pods     int `json:"pods,omitempty"`
	NotReady int `json:"notReady,omitempty"`
}

// stateVersion is the file format version.
const stateVersion = 1

type stateDoc struct {
	Version  int      `json:"version"`
	Clusters []Record `json:"clusters"`
}

// stateFile is the atomic JSON file <state_dir>/state.json.
type stateFile struct{ path string }

func newStateFile(dir string) *stateFile { return &stateFile{path: filepath.Join(dir, "state.json")} }

// load returns the recorded clusters (none when the file does not exist yet).
func (f *stateFile) load() ([]Record, error) {
	data, err := os.ReadFile(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var doc stateDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("state file %s is not valid JSON (%v); move it away to start afresh", f.path, err)
	}
	if doc.Version != stateVersion {
		return nil, fmt.Errorf("state file %s has version %d, this build reads %d", f.path, doc.Version, stateVersion)
	}
	seen := map[string]bool{}
	for _, r := range doc.Clusters {
		if validName(r.Name) != nil || seen[r.Name] {
			return nil, fmt.Errorf("state file %s: invalid or repeated cluster name %q", f.path, r.Name)
		}
		seen[r.Name] = true
	}
	return doc.Clusters, nil
}

// save writes the records atomically: a temporary file in the same directory, fsync, rename,
// fsync of the directory. A crash leaves either the old or the new file, never a torn one.
func (f *stateFile) save(records []Record) error {
	records = append([]Record(nil), records...)
	sort.Slice(records, func(i, j int) bool { return records[i].Name < records[j].Name })
	data, err := json.MarshalIndent(stateDoc{Version: stateVersion, Clusters: records}, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".state-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), f.path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
