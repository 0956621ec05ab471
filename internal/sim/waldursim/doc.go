// Package waldursim is a strict, stateful, in-memory simulator of the Waldur marketplace API
// endpoints the site agent uses. It is an http.Handler meant for tests and demos.
//
// Every request is checked against Waldur's official OpenAPI contract (8.0.5, trimmed by
// tools/trimcontract and embedded) and a dated, hand-written addendum for the later operations
// the agent uses (resource projects, membership sync statuses: addendum.go), which are served
// only when Options.Version is at least their first release: unknown paths, wrong methods, undeclared query parameters,
// malformed bodies and wrong types are answered with 404/405/400 and recorded as violations, and
// every response the simulator produces is validated against the contract's response schema so
// that a client decoding it decodes real Waldur shapes. State changes follow Waldur
// (Mastermind): order, resource and offering-user state machines, usage billing periods,
// pagination with Link headers and X-Result-Count, sparse field selection. Given an
// EventBroker (events.go), create_queue declares the subscription's queue on it and changes to
// orders, roles, resources, accounts and offering users are published to the queues of the
// offerings concerned, as Mastermind does with RabbitMQ.
//
// It must not be used by product code at runtime, and it must not read anything outside the
// package: the contract is embedded. Known deviations of real Waldur from its own contract are
// listed in errata.go.
package waldursim
