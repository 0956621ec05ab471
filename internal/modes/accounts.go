package modes

import (
	"context"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	wc "github.com/waldur/site-agent/internal/waldurclient"
)

// accounts are the offering's project service accounts and course accounts for one pass: OK
// accounts get access to their project's resources, Closed ones lose it, Erred ones are left as
// they are. Listing them is best effort: when it fails, the pass adds but removes nobody.
type accounts struct {
	byProject map[string][]wc.Account
	complete  bool
}

func fetchAccounts(ctx context.Context, u *Unit) accounts {
	out := accounts{byProject: map[string][]wc.Account{}, complete: true}
	for _, list := range []func(context.Context, string) ([]wc.Account, error){u.Waldur.ListServiceAccounts, u.Waldur.ListCourseAccounts} {
		accs, err := list(ctx, u.Offering.UUID)
		if err != nil {
			u.Log.Warn("could not list service or course accounts; this pass adds members but removes none", zap.Error(err))
			out.complete = false
			continue
		}
		for _, a := range accs {
			key := hex(a.ProjectUUID)
			out.byProject[key] = append(out.byProject[key], a)
		}
	}
	return out
}

// apply adds the project's OK accounts to desired and returns the usernames that must not be
// removed (accounts in other states than OK and Closed).
func (a accounts) apply(projectUUID string, desired []backends.Member, restrict bool) ([]backends.Member, map[string]bool) {
	keep := map[string]bool{}
	seen := map[string]bool{}
	for _, m := range desired {
		seen[m.Username] = true
	}
	for _, acc := range a.byProject[hex(projectUUID)] {
		switch {
		case acc.Username == "":
		case acc.State == "OK" && !restrict && !seen[acc.Username]:
			seen[acc.Username] = true
			desired = append(desired, backends.Member{Username: acc.Username, Email: acc.Email, Role: "service_account"})
		case acc.State != "OK" && acc.State != "Closed":
			keep[acc.Username] = true
		}
	}
	return desired, keep
}
