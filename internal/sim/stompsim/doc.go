// Package stompsim is a strict, in-memory STOMP 1.2 broker behind a WebSocket endpoint,
// modelled on RabbitMQ's Web-STOMP plugin as Waldur uses it: virtual hosts, users with a
// password and access to one virtual host, durable queues that exist only once declared and are
// subscribed as /amq/queue/<name>, client-individual acknowledgements with prefetch, redelivery
// of unacknowledged messages when a connection ends, and heart-beats in both directions (a
// client that promised heart-beats and goes silent is disconnected, as RabbitMQ does).
//
// Like RabbitMQ it answers a refused CONNECT with an ERROR frame, and a SUBSCRIBE to a missing
// queue by closing the connection without one. It refuses anything else it does not model
// (wrong subprotocol, unknown commands, /queue/ destinations) loudly, and records what clients
// did (connection attempts, heart-beats received, acknowledgements) for tests. Faults: drop
// every connection, go down (handshakes answered 503, like a proxy in front of a stopped
// broker), and inject a raw, malformed frame into a subscriber's stream.
//
// It implements the event broker the Waldur simulator publishes to (DeclareQueue, Publish).
// Test and demo code only: the release binary never links it.
package stompsim
