package modes

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/usage"
	wc "github.com/waldur/site-agent/internal/waldurclient"
)

// users reports per-user shares of each component usage, skipping components whose shares
// Waldur already holds (the incumbent re-sent them every cycle).
func (run *periodRun) users(ctx context.Context, r wc.Resource, perUser map[string]backends.Quantities, records []wc.ComponentUsage) error {
	u := run.u
	if records == nil {
		var err error
		records, err = u.Waldur.ListComponentUsages(ctx, r.UUID, usage.BillingPeriod(run.period))
		if err != nil {
			return fmt.Errorf("list usages for per-user shares: %w", err)
		}
	}
	existing, err := run.existingUserUsage(ctx)
	if err != nil {
		return err
	}
	converted := map[string]backends.Quantities{}
	for user, q := range perUser {
		converted[user] = usage.UsageToWaldur(q, u.Components())
	}
	for _, rec := range records {
		var items []wc.UserUsageItem
		same := true
		for _, user := range slices.Sorted(maps.Keys(converted)) {
			amount, ok := converted[user][rec.Type]
			if !ok {
				continue
			}
			items = append(items, wc.UserUsageItem{Username: user, Usage: usage.Amount(amount), Date: run.date})
			old, had := existing[hex(rec.UUID)+"/"+user]
			if !had || !usage.Close(old, usage.Round2(amount)) {
				same = false
			}
		}
		if len(items) == 0 || same {
			continue
		}
		if err := u.Waldur.SetUserUsages(ctx, rec.UUID, items); err != nil {
			return fmt.Errorf("set user usages for %s: %w", rec.Type, err)
		}
		u.Log.Debug("per-user usage reported", zap.String("resource", r.UUID), zap.String("component", rec.Type), zap.Int("users", len(items)))
	}
	return nil
}

// existingUserUsage lists the offering's per-user usages of the period once per pass.
func (run *periodRun) existingUserUsage(ctx context.Context) (map[string]float64, error) {
	run.userOnce.Do(func() {
		rows, err := run.u.Waldur.ListOfferingUserUsages(ctx, run.u.Offering.UUID, usage.BillingPeriod(run.period))
		if err != nil {
			run.userErr = fmt.Errorf("list per-user usages: %w", err)
			return
		}
		run.userUsage = map[string]float64{}
		for _, row := range rows {
			parent := path.Base(strings.TrimRight(row.ComponentUsage, "/"))
			run.userUsage[hex(parent)+"/"+row.Username] = float64(row.Usage)
		}
	})
	return run.userUsage, run.userErr
}
