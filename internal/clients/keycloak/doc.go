// Package keycloak is site-agent's Keycloak admin client, built on gocloak v13: it keeps the
// admin token fresh and manages the two-level group hierarchy (a top-level parent per cluster,
// a child per project and role) and group memberships that the Rancher backend binds to
// Rancher roles.
//
// How it talks to Keycloak:
//   - Token: password grant for the admin user against
//     {URL}realms/{UserRealm}/protocol/openid-connect/token, cached and renewed a quarter of its
//     lifetime (at most 30 s) before expiry with the refresh token, falling back to a new
//     password grant; a 401 from the admin API drops the token and the call is retried once.
//     One goroutine fetches while the others wait.
//   - Retries: gocloak's resty client runs over go-retryablehttp, which retries network
//     errors, 5xx and 429 with jittered exponential backoff (Retry-After honoured). Afterwards
//     errors are classified once: HTTP statuses become failure.StatusErr (5xx/429 transient,
//     other 4xx permanent), network failures failure.Transient. Redirects are never followed.
//     Messages name the operation, group or user and never carry the password or a token.
//   - Lookups never list all groups: the parent is found with GET groups?search=<name>&exact=true
//     and the child with GET groups/{parent}/children?search=<name>&exact=true (gocloak has no
//     call for the latter, so its resty client sends it). Ids are cached by name; a 404 on a
//     cached id drops it and the lookup runs again. Steady state (warm cache): FindChildGroup and
//     EnsureGroup send no request, Members one per 100 members. A child EnsureGroup does not
//     know is created first and looked up only on a 409 (one request for a new group).
//   - Versions (compat.go): Keycloak 18–26. Before 23.0 GET groups/{id}/children does not exist
//     (405): the parent group's representation, which then carries its subgroups, is read
//     instead, for the rest of the process. Before 20.0 GET groups ignores exact: the substring
//     matches are paged through. ServerVersion reads GET admin/serverinfo; VersionNote judges it.
//   - Rights (rights.go): CheckRights proves manage-users (or realm-admin) of the realm's admin
//     client from the roles in the client's own access token, or from a group's access flags
//     when the token carries no role claims.
//
// Keycloak behaviour relied upon (checked against the Keycloak sources and javadoc, upgrade
// notes, issue threads, and published measurements of 26.7.1 — the simulator in keycloaksim
// encodes the same rules, with a version switch, and the tests run against it):
//   - GET groups?search=&exact=true matches names anywhere in the tree and returns each match
//     inside its top-level ancestor, paging the matches; the client therefore takes a root with
//     the exact name and counts (substring) matches to decide whether to read another page.
//   - GET groups/{id}/children?exact=true compares with SQL LIKE ('_' and '%' are wildcards,
//     and names here contain '_'), and Keycloak 24.0.x ignored search on that endpoint
//     (keycloak/keycloak#28818): names are compared in the client and pages are followed.
//   - POST groups and POST groups/{id}/children answer 201 with the id in Location; a duplicate
//     name is a 409. Group names over 255 characters make Keycloak fail with a 500, so they are
//     refused before any request.
//   - Membership PUT is idempotent; membership DELETE of a non-member is 204; deleting a group
//     deletes its subgroups and memberships.
//   - Usernames are stored in lower case; exact username search ignores case.
//   - Listing groups needs query-groups/view-users, writes need manage-users (or realm-admin)
//     of the realm's admin client (realm-management, or <realm>-realm for a master admin);
//     access tokens carry the effective roles in resource_access unless they are lightweight.
//
// Deliberate choices: DeleteParentIfEmpty also requires the parent to have no direct members
// (the incumbent only checked subGroups; a member added by hand would lose access silently).
// Config.VerifyTLS is false in the zero value, so callers must default it to true as the
// incumbent's keycloak_ssl_verify does; New warns when verification is off for https.
//
// It must not know about Rancher or Waldur; the Rancher backend decides names and bindings.
package keycloak
