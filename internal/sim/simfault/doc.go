// Package simfault is fault injection for the project's HTTP simulators; tests and the demo
// only — product code paths other than the simulators must not use it.
//
// An Injector decides, in request order, whether a request fails and how: first from the
// per-operation queues filled by FailNext, then at random from a math/rand generator seeded
// with Config.Seed, so the same seed and the same request sequence give the same faults. Write
// answers with the chosen fault: an HTTP 500/502/503/429 (429 with Retry-After: 0), whose body
// each simulator shapes like the service it imitates, or a connection reset. LoseResponse is
// the one kind that lets the request be applied first; the simulator applies it, discards the
// answer and then calls Write, so the client never learns the outcome.
package simfault
