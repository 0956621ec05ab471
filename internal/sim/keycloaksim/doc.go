// Package keycloaksim is a strict, stateful, in-memory simulator of the part of Keycloak's admin
// REST API that site-agent's keycloak client uses: the OpenID Connect token
// endpoint (password and refresh_token grants for admin-cli), the realm representation, users
// (exact and substring search, lookup by id, group memberships) and groups (a tree with search,
// children, members, create, update and delete). It is an http.Handler for tests and demos; no
// Keycloak server can run on the build machines, so this is the only Keycloak the tests see.
//
// Strictness: an unknown path is a 404, a method Keycloak does not serve on a path is a 405 with
// an Allow header, and a route or query parameter that Keycloak serves but this simulator does not
// model is a 501 (recorded by Unimplemented) rather than a silently wrong answer. Malformed JSON is
// a 400. Keycloak ignores unknown JSON fields and unknown query parameters, and so does the
// simulator, but it records them (IgnoredFields, IgnoredQuery) so that tests can catch typos.
//
// Behaviour modelled on Keycloak, with the source of each rule:
//
//   - Routes, defaults and parameters: GroupsResource, GroupResource, UsersResource and
//     UserResource of Keycloak 26 (read from the Keycloak sources and the published javadoc of
//     24.0–26.3). GET groups/{id}/children defaults to first=0, max=10; members and users
//     default to max=100; GET groups pages only when first or max is given.
//   - GET groups?search=: the match runs over the whole tree (exact=true is case-sensitive
//     equality; otherwise a case-insensitive SQL LIKE '%s%'); first/max page the matches; with
//     populateHierarchy (default true) each match is returned inside its top-level ancestor with
//     subGroups populated only along the path, roots sorted by name; subGroupCount is set on every
//     node unless subGroupsCount=false. Without search: top-level groups only, subGroups empty.
//   - GET groups/{id}/children?search=&exact=true compares with SQL LIKE, so '_' and '%' in the
//     search are wildcards (JpaGroupAdapter in Keycloak 26); callers must re-check names.
//     Options.ChildrenSearchIgnored reproduces Keycloak 24.0.x, where the children endpoint
//     ignored search (keycloak/keycloak#28818).
//   - POST groups answers 201 with an empty body and a Location header; POST children answers
//     201 with the created group in the body (without subGroupCount). Duplicates are 409 with
//     "Top level group named 'x' already exists." or "Sibling group named 'x' already exists.".
//     A blank name is 400 "Group name is missing". A name longer than 255 characters is a 500
//     (the database column is varchar(255); reported by the rancher-kc-crd authors on 26).
//   - Deleting a group deletes its subtree and every membership in it. Membership PUT is
//     idempotent; membership DELETE of a non-member is 204. The membership routes resolve the
//     user first ("User not found"), then check rights, then the group ("Group not found"); the
//     group routes answer "Could not find group by id".
//   - Usernames are stored lower-case; exact username search compares with the lower-cased value.
//   - Versions (Options.Version, default 26): before 23.0 GET groups/{id}/children is a 405 (only
//     POST serves that path) and group representations carry their whole subtree; before 20.0
//     GET groups ignores exact (substring search). GET admin/serverinfo reports the version in
//     systemInfo.version to any administrator. See versions.go for the sources.
//   - Access tokens name the admin's roles in resource_access (realm-management when the admin
//     lives in the managed realm, "<realm>-realm" for a master-realm admin; realm-admin expanded),
//     as Keycloak does unless lightweight tokens are on (Options.LightweightTokens).
//   - Error bodies: {"error":"HTTP 401 Unauthorized"}, {"error":"HTTP 403 Forbidden"},
//     {"error":"<message>"} for 404s, {"errorMessage":"..."} for 400/409 validation, and
//     {"error":"invalid_request","error_description":"Cannot parse the JSON"} for malformed JSON.
//     These follow measurements of Keycloak 26.7.1 published by the gloak project; they are
//     approximations for older versions.
//   - Rights: realm-admin and manage-users may do everything modelled; view-users may read users,
//     groups and members; query-groups may only list groups; query-users may only list users.
//     A token without any of these gets 403 everywhere, including GET of the realm.
//
// Assumptions that could not be checked against a running Keycloak are marked in the code with
// "assumption:". Deliberate simplifications: one admin user, one confidential-less client
// (admin-cli), access tokens are opaque HMAC-signed JWT-shaped strings validated by lookup, no
// user federation, no fine-grained admin permissions, and moving a group (POST with an id) is a
// 501.
//
// It must not be used by product code at runtime, and it must not read anything outside the
// package.
package keycloaksim
