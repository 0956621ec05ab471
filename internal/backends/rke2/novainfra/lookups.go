package novainfra

import (
	"context"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
)

// lookupTTL is how long a flavor or image resolved by name stands. An order resolves the
// same flavor for its checks and again for every node it boots (by name: a Nova get that
// misses and a list), and the base image once per node; a minute covers an order's calls
// while an image replaced under the same name is picked up soon after. Diagnostics always
// look afresh.
const lookupTTL = time.Minute

// resolved is a flavor or image found at a time.
type resolved struct {
	flavor *flavors.Flavor
	image  string
	at     time.Time
}

// cachedFlavor is cl.flavor, remembered for lookupTTL per project (a private flavor is seen
// only by the projects it is shared with).
func (in *Infra) cachedFlavor(ctx context.Context, cl *conn, nameOrID string) (*flavors.Flavor, error) {
	key := "flavor " + cl.ProjectID + " " + nameOrID
	if r, ok := in.recall(key); ok {
		f := *r.flavor
		return &f, nil
	}
	f, err := cl.flavor(ctx, nameOrID)
	if err != nil {
		return nil, err
	}
	kept := *f
	in.keep(key, resolved{flavor: &kept})
	return f, nil
}

// cachedImage is cl.image, remembered for lookupTTL per project.
func (in *Infra) cachedImage(ctx context.Context, cl *conn, name string) (string, error) {
	key := "image " + cl.ProjectID + " " + name
	if r, ok := in.recall(key); ok {
		return r.image, nil
	}
	id, err := cl.image(ctx, name)
	if err != nil {
		return "", err
	}
	in.keep(key, resolved{image: id})
	return id, nil
}

func (in *Infra) recall(key string) (resolved, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	r, ok := in.resolved[key]
	if !ok || time.Since(r.at) >= lookupTTL {
		return resolved{}, false
	}
	return r, true
}

func (in *Infra) keep(key string, r resolved) {
	r.at = time.Now()
	in.mu.Lock()
	defer in.mu.Unlock()
	in.resolved[key] = r
}
