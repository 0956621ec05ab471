// Package secret holds the Secret type: a string that never prints. Config values, backend
// settings and tokens that grant access are Secrets from the moment they are decoded, so no log
// line, error message sent to Waldur, diagnostics report or metric can reveal them. Scrub is the
// last line of defence for text from elsewhere: it replaces every registered value and its
// URL-encoded, JSON-escaped and base64 forms (short ones only as whole tokens). The registry is
// bounded; owners of rotating values call Forget or Replace so replaced tokens leave it.
//
// It must stay a leaf package (standard library only) so that every other package can use it.
package secret
