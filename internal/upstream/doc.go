// Package upstream is the HTTP plumbing shared by the clients of upstream APIs (Waldur,
// Rancher, the Kubernetes proxy, Keycloak, OpenStack): a keep-alive transport with the
// operator's TLS and proxy settings, retries with exponential backoff and jitter through
// go-retryablehttp (Retry-After honoured), a retry policy that never repeats a
// possibly-applied create, and no redirects (a redirect from an API is a configuration error
// worth seeing, and following it could forward credentials to another host). It must not
// know any particular API: each client says which of its requests are unsafe to repeat and
// brings its own defaults.
//
// The layers, innermost first:
//   - Transport: the pooled *http.Transport (TLS 1.2+, verification, extra roots, proxy).
//   - Attempt: the *http.Client of one attempt (per-attempt timeout, no redirects).
//   - NewRetryable / NewRetryTransport: go-retryablehttp over an attempt client, with
//     Backoff, PassthroughErrorHandler (the caller sees the last response or error itself
//     and classifies it) and attempts logged at debug level.
//   - NewClient: all of the above as one *http.Client.
//
// Settings (settings.go) are one upstream's timeout, retries and backoff from the
// configuration's `upstreams` section; each client applies them over its own defaults.
//
// Log fields in the context (logctx.go): WithLogFields puts fields in a context and Log adds
// them to a logger, so that the lines a client or a backend writes while working for an order
// or a resource name it (the backends package chooses the fields: order_uuid, resource_uuid).
//
// Safe and unsafe requests. SafePolicy retries network errors, 5xx (but 501) and 429: right
// for reads, for PUT/DELETE, and for creates of objects with client-chosen names, where a
// repeat answers 409 and the caller treats that as "exists" (Kubernetes objects, Keycloak
// groups). UnsafePolicy is for creates of objects with server-assigned ids (Rancher projects
// and bindings, OpenStack projects, networks, users): a repeat after a lost answer would
// create a second object, so they are retried only when the request cannot have been applied
// — it never left this host (connection refused, DNS failure, any dial error) or the server
// said it did nothing (429, 503). Their callers look for the object before posting again.
//
// Why the Waldur client retries its POSTs with SafePolicy: they are not creates but state
// transitions and reports (approve, reject, set_state_done/erred, set_backend_id, usage
// submission). Repeating one that was applied either repeats the same end state or fails with a
// 4xx that order processing resolves by reading the order again (approve and set_state_done
// are verified by re-reading the order after a failure, and usage is keyed by component and
// period). Holding those back on a lost response would only lengthen outages, so Waldur keeps
// the library's default behaviour.
package upstream
