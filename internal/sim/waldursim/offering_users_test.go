package waldursim

import (
	"strings"
	"testing"
)

func TestOfferingUserTransitions(t *testing.T) {
	all := []string{OURequested, OUCreating, OUPendingAccountLinking, OUPendingAdditionalValidation,
		OUOK, OURequestedDeletion, OUDeleting, OUDeleted, OUErrorCreating, OUErrorDeleting}
	rules := []struct {
		action, target string
		sources        []string
	}{
		{"begin_creating", OUCreating, []string{OURequested, OUErrorCreating}},
		{"set_validation_complete", OUOK, []string{OUPendingAdditionalValidation, OUPendingAccountLinking}},
		{"set_error_creating", OUErrorCreating, []string{OURequested, OUCreating, OUPendingAccountLinking, OUPendingAdditionalValidation}},
		{"set_pending_account_linking", OUPendingAccountLinking, []string{OUCreating, OUErrorCreating, OUPendingAdditionalValidation}},
		{"set_pending_additional_validation", OUPendingAdditionalValidation, []string{OUCreating, OUErrorCreating, OUPendingAccountLinking}},
	}
	w := newWorld(t, Options{})
	for _, rule := range rules {
		for _, from := range all {
			legal := contains(rule.sources, from)
			name := rule.action + " from " + from
			t.Run(name, func(t *testing.T) {
				ou := w.sim.AddOfferingUser(OfferingUser{OfferingUUID: offeringID, UserUUID: w.users[2].UUID, State: from,
					Comment: "old", CommentURL: "https://old.example/"})
				var body any
				if strings.HasPrefix(rule.action, "set_pending") {
					body = map[string]any{"comment": "please link", "comment_url": "https://idp.example/link"}
				}
				r := w.call(t, "POST", "/api/marketplace-offering-users/"+ou.UUID+"/"+rule.action+"/", body)
				got, _ := w.sim.OfferingUser(ou.UUID)
				if !legal {
					wantStatus(t, r, 409)
					if got.State != from {
						t.Errorf("state moved to %s on an illegal transition", got.State)
					}
					return
				}
				wantStatus(t, r, 200)
				if got.State != rule.target {
					t.Errorf("state %s, want %s", got.State, rule.target)
				}
				switch {
				case body != nil && (got.Comment != "please link" || got.CommentURL != "https://idp.example/link"):
					t.Errorf("comment not stored: %+v", got)
				case rule.target == OUOK && (got.Comment != "" || got.CommentURL != ""):
					t.Errorf("validation complete did not clear the comment: %+v", got)
				}
			})
		}
	}
	w.sim.AssertNoViolations(t)
}

func TestOfferingUserUsernamePatch(t *testing.T) {
	tests := []struct {
		from, username, want string
	}{
		{OURequested, "u1", OUOK},
		{OUCreating, "u1", OUOK},
		{OUErrorCreating, "u1", OUOK},
		{OUPendingAccountLinking, "u1", OUOK},
		{OUPendingAdditionalValidation, "u1", OUOK},
		{OUCreating, "", OUCreating},
		{OUDeleting, "u1", OUDeleting},
		{OUOK, "renamed", OUOK},
	}
	w := newWorld(t, Options{})
	for _, tt := range tests {
		t.Run(tt.from+" with "+tt.username, func(t *testing.T) {
			ou := w.sim.AddOfferingUser(OfferingUser{OfferingUUID: offeringID, UserUUID: w.users[2].UUID, State: tt.from})
			r := w.call(t, "PATCH", "/api/marketplace-offering-users/"+ou.UUID+"/", map[string]any{"username": tt.username})
			wantStatus(t, r, 200)
			got := r.object(t)
			if got["state"] != tt.want {
				t.Errorf("state %v, want %s", got["state"], tt.want)
			}
			stored, _ := w.sim.OfferingUser(ou.UUID)
			if stored.Username != tt.username || stored.State != tt.want {
				t.Errorf("stored %+v", stored)
			}
		})
	}
	t.Run("unknown offering user", func(t *testing.T) {
		wantStatus(t, w.call(t, "PATCH", "/api/marketplace-offering-users/"+planID+"/", map[string]any{"username": "x"}), 404)
	})
	w.sim.AssertNoViolations(t)
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
