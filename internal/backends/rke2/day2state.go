package rke2

import (
	"sync"
	"time"
)

// day2State is what the backend keeps between calls within one process: a lock per cluster,
// so an order and a health pass never work on the same cluster at once (one process runs every
// mode with -m all; separate processes per mode are not serialised, and every step stays
// idempotent for them), the metadata a health pass computed for membership sync to send, and
// the clusters whose bootstrap Vault objects this process wrote (and when) and has not removed
// yet.
type day2State struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
	meta  map[string]map[string]any
	vault map[string]time.Time
	// clusters are the Rancher clusters orders' calls read lately (clustermemo.go).
	clusters map[string]rememberedCluster
}

func newDay2State() *day2State {
	return &day2State{locks: map[string]*sync.Mutex{}, meta: map[string]map[string]any{}, vault: map[string]time.Time{},
		clusters: map[string]rememberedCluster{}}
}

func (d *day2State) lockOf(uuid string) *sync.Mutex {
	d.mu.Lock()
	defer d.mu.Unlock()
	l := d.locks[uuid]
	if l == nil {
		l = &sync.Mutex{}
		d.locks[uuid] = l
	}
	return l
}

// lock waits for the cluster (orders).
func (d *day2State) lock(uuid string) func() {
	l := d.lockOf(uuid)
	l.Lock()
	return l.Unlock
}

// tryLock takes the cluster if it is free (health passes: a busy cluster is looked at next pass).
func (d *day2State) tryLock(uuid string) (func(), bool) {
	l := d.lockOf(uuid)
	if !l.TryLock() {
		return nil, false
	}
	return l.Unlock, true
}

// remember keeps the metadata a health pass computed until Metadata takes it.
func (d *day2State) remember(uuid string, md map[string]any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.meta[uuid] = md
}

// take returns and forgets the remembered metadata (nil when there is none).
func (d *day2State) take(uuid string) map[string]any {
	d.mu.Lock()
	defer d.mu.Unlock()
	md := d.meta[uuid]
	delete(d.meta, uuid)
	return md
}

// setVault records that the cluster's bootstrap Vault objects were written now (true) or are
// gone.
func (d *day2State) setVault(uuid string, written bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if written {
		d.vault[uuid] = time.Now()
	} else {
		delete(d.vault, uuid)
	}
}

func (d *day2State) vaultWritten(uuid string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.vault[uuid]
	return ok
}

// vaultFresh: this process wrote the cluster's bootstrap Vault objects less than within ago.
func (d *day2State) vaultFresh(uuid string, within time.Duration) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	at, ok := d.vault[uuid]
	return ok && time.Since(at) < within
}
