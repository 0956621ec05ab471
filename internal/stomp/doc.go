// Package stomp is the agent's STOMP 1.2 client for Waldur's event queues, carried over a
// WebSocket to RabbitMQ's Web-STOMP plugin (go-stomp on top of coder/websocket's NetConn,
// subprotocol v12.stomp).
//
// A Listener owns one subscription: it asks its Prepare callback for credentials and a queue
// (the caller registers them through the Waldur API), connects, subscribes to
// /amq/queue/<queue> (the queue Waldur declared; /queue/ would redeclare it and fail), and
// hands every message to its Handler on a bounded pool of workers, acknowledging each one
// (client-individual) once the handler returns. Heart-beats are negotiated and really sent, so
// the broker does not drop an idle link. A lost connection is re-established by the listener's
// own loop — one reconnect at a time — with capped exponential backoff and jitter: fast for
// network failures (a broker restart is over in seconds), slower when the broker refuses the
// credentials or the queue, in which case Prepare is asked again first. It never gives up; its
// Status says whether it is connected, for readiness probes.
//
// The package knows nothing about Waldur objects or backends and never decides what a message
// means; it must not import modes, waldurclient or backends.
package stomp
