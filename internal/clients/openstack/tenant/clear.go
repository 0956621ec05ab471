package tenant

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/failure"
)

// ClearOptions say how Clear treats a project's leftovers.
type ClearOptions struct {
	Kinds []Kind
	// Keep drops objects that are not leftovers (the agent's own) from what is found.
	Keep func(kind string, o Leftover) bool
	// Force deletes the leftovers; without it Refuse's error is returned.
	Force  bool
	Refuse func(Inventory) error
	// Wait bounds how long one call waits for the deletions; PollEvery is the pause between looks.
	Wait, PollEvery time.Duration
	What            string // e.g. "tenant x", for messages
	Log             *zap.Logger
}

// Clear returns nil once the project holds no leftovers. Without Force it returns Refuse's
// error while any are there. With Force it asks for their deletion in dependency order and
// looks again, for at most Wait; what is still being deleted then is a transient "deletion in
// progress", so no call blocks for long and the next one continues.
func Clear(ctx context.Context, s Services, projectID string, o ClearOptions) error {
	log := o.Log
	if log == nil {
		log = zap.NewNop()
	}
	deadline := time.Now().Add(o.Wait)
	for round := 0; ; round++ {
		inv, err := Find(ctx, s, o.Kinds, projectID)
		if err != nil {
			return err
		}
		if o.Keep != nil {
			inv = inv.Filter(o.Keep)
		}
		if inv.Empty() {
			return nil
		}
		if !o.Force {
			return o.Refuse(inv)
		}
		if round > 0 && !time.Now().Before(deadline) {
			return failure.Transient(fmt.Errorf("force_destroy: deletion in progress in %s: %s left; the next pass continues", o.What, inv))
		}
		if round == 0 {
			log.Warn("force_destroy: deleting what the tenant's users made", zap.String("project_id", projectID), zap.String("objects", inv.Names()))
		}
		note, err := RemoveAll(ctx, s, inv)
		if err != nil {
			return err
		}
		if note != "" {
			log.Info("force_destroy: a deletion must wait", zap.String("project_id", projectID), zap.String("detail", note))
		}
		if round == 0 {
			continue // look again at once: many deletions are immediate
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(o.PollEvery, max(time.Until(deadline), 0))):
		}
	}
}
