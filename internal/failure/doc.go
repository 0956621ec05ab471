// Package failure classifies errors once, at the edge, for both sides of the agent: the Waldur
// client and the backends. It says whether a failure is transient (retry later, never mark an order
// erred), written for users (PublicMessage), an unexpected upstream status (StatusError), or one of
// the sentinels modes act on (ErrNotFound, ErrDuplicate, ErrNotReady).
//
// Every upstream error body and every user-facing message passes through its types, which scrub
// registered secrets (internal/secret) from what they print.
//
// It is a leaf: it imports only the standard library and internal/secret (itself a leaf), so
// that internal/waldurclient and internal/backends can share it without importing each other.
package failure
