// Package waldurclient is the typed client of the Waldur marketplace API that site-agent uses:
// orders, provider resources, teams, offering users, component usages, offerings and agent
// identities, shaped by Waldur's OpenAPI contract (8.0.5) and proven against the contract-validating
// simulator in waldursim.
//
// One keep-alive transport serves the whole process; network errors, 5xx and 429 are retried with
// exponential backoff and jitter (go-retryablehttp, set up by package upstream), and what still
// fails is returned as a failure.Transient error. Lists are read with page_size=300 (Waldur's
// maximum), following Link rel="next", and with field= sparse fieldsets where they shrink
// responses. In dry-run mode nothing but GET requests leaves the process.
//
// It must not know about backends or modes: it speaks Waldur, nothing else.
package waldurclient
