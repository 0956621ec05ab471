package modes

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	wc "github.com/waldur/site-agent/internal/waldurclient"
)

// teamCache fetches each project's team once per pass: resources of one project share it.
type teamCache struct {
	client *wc.Client
	mu     sync.Mutex
	calls  map[string]*teamCall
}

type teamCall struct {
	once sync.Once
	team []wc.TeamMember
	err  error
}

func newTeamCache(c *wc.Client) *teamCache {
	return &teamCache{client: c, calls: map[string]*teamCall{}}
}

func (t *teamCache) get(ctx context.Context, r wc.Resource) ([]wc.TeamMember, error) {
	key := r.ProjectUUID
	if key == "" {
		key = "resource:" + r.UUID
	}
	t.mu.Lock()
	c, ok := t.calls[key]
	if !ok {
		c = &teamCall{}
		t.calls[key] = c
	}
	t.mu.Unlock()
	c.once.Do(func() {
		c.team, c.err = t.client.Team(ctx, r.UUID)
		if c.err != nil {
			c.err = fmt.Errorf("fetch team: %w", c.err)
		}
	})
	return c.team, c.err
}

// sameJSON compares two JSON-shaped values by their encoding.
func sameJSON(a, b map[string]any) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
