// Package rmqenv connects tier-2 tests to the real RabbitMQ that scripts/rabbitmq/up.sh starts
// on loopback (STOMP, Web-STOMP and management plugins). It reads the script's env file, and
// offers a Broker that does for the Waldur simulator what Mastermind does for real Waldur:
// declare each subscription's virtual host, user, permissions and durable queue through the
// management API, and publish events into the queue (over STOMP, as the admin user). Stop and
// Start restart the broker for outage tests. Tests only.
package rmqenv
