package modes

import (
	"context"
	"sync"
	"time"
)

// keyLocks serialises work per key (a resource): an event handler and a pass never work on the
// same resource at once. The zero value is ready to use.
type keyLocks struct {
	mu   sync.Mutex
	held map[string]chan struct{}
}

// tryLock takes key if it is free.
func (k *keyLocks) tryLock(key string) (unlock func(), ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, busy := k.held[key]; busy {
		return nil, false
	}
	return k.take(key), true
}

// lock waits for key; waited says whether someone else had it (what they did may have changed
// what the caller read before).
func (k *keyLocks) lock(ctx context.Context, key string) (unlock func(), waited bool, err error) {
	for {
		k.mu.Lock()
		ch, busy := k.held[key]
		if !busy {
			defer k.mu.Unlock()
			return k.take(key), waited, nil
		}
		k.mu.Unlock()
		waited = true
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, waited, ctx.Err()
		}
	}
}

// take marks key held; caller holds k.mu.
func (k *keyLocks) take(key string) func() {
	if k.held == nil {
		k.held = map[string]chan struct{}{}
	}
	ch := make(chan struct{})
	k.held[key] = ch
	var once sync.Once
	return func() {
		once.Do(func() {
			k.mu.Lock()
			delete(k.held, key)
			k.mu.Unlock()
			close(ch)
		})
	}
}

// pingCache remembers a successful backend ping for a while, so that work started by events
// does not ping the backend before every order.
type pingCache struct {
	mu sync.Mutex
	ok time.Time
}

// pingEvery is how long a successful ping stands for event-driven work.
const pingEvery = 30 * time.Second

// backendReadyCached is backendReady at most every pingEvery while pings fully succeed.
func backendReadyCached(ctx context.Context, env *Env, u *Unit, consequence string) (access bool, err error) {
	u.ping.mu.Lock()
	fresh := time.Since(u.ping.ok) < pingEvery
	u.ping.mu.Unlock()
	if fresh {
		return true, nil
	}
	access, err = backendReady(ctx, env, u, consequence)
	if err == nil && access {
		u.ping.mu.Lock()
		u.ping.ok = time.Now()
		u.ping.mu.Unlock()
	}
	return access, err
}
