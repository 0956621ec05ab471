package stomp

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/secret"
)

// Session is what one connection needs: where to log in and which queue to read.
type Session struct {
	VHost    string        // STOMP host header (RabbitMQ virtual host)
	Login    string        // STOMP login
	Passcode secret.Secret // STOMP passcode
	Queue    string        // subscribed as /amq/queue/<Queue>
}

// Message is one event as it arrived.
type Message struct {
	Destination string
	Body        []byte
	Received    time.Time
}

// Handler handles one message. It runs on a worker; the listener acknowledges the message when
// the handler returns, whatever the outcome (failures are the handler's to log and retry).
type Handler func(ctx context.Context, m Message)

// Backoff shapes the delays between connection attempts. Each delay doubles from its minimum
// to its maximum; half of it is random.
type Backoff struct {
	// Min and Max bound retries after network failures and lost connections (defaults 100 ms
	// and 1 s, so that a restarted broker is found again within about a second).
	Min, Max time.Duration
	// Patience is how long an outage may last before retries slow to LongMax (defaults 1 min
	// and 30 s): a broker down for hours is not knocked on every second.
	Patience, LongMax time.Duration
	// RefusedMin and RefusedMax bound retries after the broker refused the credentials or the
	// queue (defaults 2 s and 1 min): they rarely fix themselves within a second.
	RefusedMin, RefusedMax time.Duration
}

func (b Backoff) withDefaults() Backoff {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&b.Min, 100*time.Millisecond)
	def(&b.Max, time.Second)
	def(&b.Patience, time.Minute)
	def(&b.LongMax, 30*time.Second)
	def(&b.RefusedMin, 2*time.Second)
	def(&b.RefusedMax, time.Minute)
	return b
}

// Options configure a Listener.
type Options struct {
	// URL is the Web-STOMP endpoint, ws:// or wss://.
	URL string
	// HTTPClient carries TLS verification and proxy settings for the WebSocket handshake
	// (default: a plain client that verifies certificates).
	HTTPClient *http.Client
	// Prepare returns the session to connect with. It is called before the first connection
	// and again after the broker refused the login or the queue.
	Prepare func(ctx context.Context) (Session, error)
	// Handle is called for every message.
	Handle Handler
	// HeartBeat is the heart-beat period asked for in both directions (default 10 s).
	HeartBeat time.Duration
	// Workers is how many messages are handled at once (default 8); Prefetch how many
	// unacknowledged messages the broker may send ahead (default and maximum Workers + 16:
	// more would fill go-stomp's buffers and stall its heart-beats while workers are busy).
	Workers, Prefetch int
	Backoff           Backoff
	// OnState is told every change between connected and disconnected.
	OnState func(connected bool)
	// Name labels log lines (e.g. the object type).
	Name   string
	Logger *zap.Logger
}

func (o Options) validate() (Options, error) {
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return o, errors.New("event broker URL must be a ws:// or wss:// URL")
	}
	if o.Prepare == nil || o.Handle == nil {
		return o, errors.New("event listener needs Prepare and Handle")
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.HeartBeat <= 0 {
		o.HeartBeat = 10 * time.Second
	}
	if o.Workers <= 0 {
		o.Workers = 8
	}
	if o.Prefetch <= 0 || o.Prefetch > o.Workers+16 {
		o.Prefetch = o.Workers + 16
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	o.Backoff = o.Backoff.withDefaults()
	return o, nil
}
