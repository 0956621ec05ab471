package waldursim

import (
	"net/http"
	"slices"
	"strings"
)

// ouAutoOK are the states an offering user leaves for OK when its username is set
// (Mastermind OfferingUser.save).
var ouAutoOK = []string{OURequested, OUCreating, OUPendingAccountLinking, OUPendingAdditionalValidation, OUErrorCreating}

// offeringUsersList answers ordered by username like Mastermind (blank usernames last).
func (s *Server) offeringUsersList(c *call) result {
	f := filter{c.query}
	users := s.st.offeringUsers.all()
	slices.SortStableFunc(users, func(a, b *OfferingUser) int {
		switch {
		case a.Username == b.Username:
			return 0
		case a.Username == "":
			return 1
		case b.Username == "":
			return -1
		}
		return strings.Compare(a.Username, b.Username)
	})
	var rows []*OfferingUser
	for _, ou := range users {
		username := ""
		if u, ok := s.st.users.get(ou.UserUUID); ok {
			username = u.Username
		}
		if f.uuid("offering_uuid", ou.OfferingUUID) && f.boolean("is_restricted", ou.IsRestricted) &&
			f.oneOf("state", ou.State) && f.uuid("user_uuid", ou.UserUUID) && f.oneOf("user_username", username) {
			rows = append(rows, ou)
		}
	}
	return lazy(rows, func(ou *OfferingUser) map[string]any { return s.st.renderOfferingUser(c, ou) })
}

func (s *Server) offeringUserPatch(c *call) result {
	ou, found := s.st.offeringUsers.get(c.params["uuid"])
	if !found {
		return notFound()
	}
	for key := range c.body {
		if key != "username" {
			return s.unsupported(c, "PATCH of offering-user field "+key)
		}
	}
	if c.has("username") {
		username := c.str("username")
		changed := username != ou.Username
		ou.Username, ou.Modified = username, c.now
		if username != "" && changed && slices.Contains(ouAutoOK, ou.State) {
			ou.State = OUOK
		}
		if changed && username != "" {
			s.st.emitOfferingUser(ou, "username_set")
		}
	}
	return ok(s.st.renderOfferingUser(c, ou))
}

// ouTransition implements one offering-user state action (Mastermind OfferingUser FSM).
func ouTransition(target string, sources ...string) func(*Server, *call) result {
	return func(s *Server, c *call) result {
		ou, found := s.st.offeringUsers.get(c.params["uuid"])
		if !found {
			return notFound()
		}
		if !slices.Contains(sources, ou.State) {
			return validStates(sources...)
		}
		ou.State, ou.Modified = target, c.now
		switch target {
		case OUPendingAccountLinking, OUPendingAdditionalValidation:
			if c.has("comment") {
				ou.Comment = c.str("comment")
			}
			if c.has("comment_url") {
				ou.CommentURL = c.str("comment_url")
			}
		case OUOK:
			ou.Comment, ou.CommentURL = "", ""
		}
		return noBody(http.StatusOK)
	}
}

// unsupported records that the request uses something the simulator does not model and
// refuses it; it runs under the state lock.
func (s *Server) unsupported(c *call, what string) result {
	s.violations = append(s.violations, strings.ToUpper(c.op.Method)+" "+c.op.Path+": not supported by the simulator: "+what)
	return errorResult(http.StatusBadRequest, detail("Not supported by the simulator: "+what+"."))
}
