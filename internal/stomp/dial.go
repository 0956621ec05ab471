package stomp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"
	gostomp "github.com/go-stomp/stomp/v3"
	"github.com/go-stomp/stomp/v3/frame"
)

// subprotocol is the WebSocket subprotocol for STOMP 1.2 (RabbitMQ Web-STOMP, stomp.js).
const subprotocol = "v12.stomp"

// connectTimeout bounds the WebSocket handshake plus the STOMP CONNECT exchange.
const connectTimeout = 10 * time.Second

// RefusedError is the broker's ERROR frame: wrong credentials, an unknown virtual host or
// queue, or no permission. Retrying the same session will not help.
type RefusedError struct {
	Message string // the frame's message header
	Detail  string // its body
}

func (e *RefusedError) Error() string {
	if e.Detail == "" {
		return "event broker refused: " + e.Message
	}
	return "event broker refused: " + e.Message + ": " + e.Detail
}

// conn is one live STOMP connection with its subscription.
type conn struct {
	stomp  *gostomp.Conn
	sub    *gostomp.Subscription
	cancel context.CancelFunc // ends the WebSocket
	since  time.Time
}

// dial opens the WebSocket, logs in and subscribes.
func dial(ctx context.Context, o Options, s Session) (*conn, error) {
	dctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	ws, resp, err := websocket.Dial(dctx, o.URL, &websocket.DialOptions{HTTPClient: o.HTTPClient, Subprotocols: []string{subprotocol}})
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("websocket handshake with %s: HTTP %d", o.URL, resp.StatusCode)
		}
		return nil, fmt.Errorf("websocket handshake with %s: %w", o.URL, err)
	}
	ws.SetReadLimit(8 << 20)
	// The net.Conn lives until the connection is closed, not just for the handshake.
	lctx, lcancel := context.WithCancel(context.WithoutCancel(ctx))
	nc := websocket.NetConn(lctx, ws, websocket.MessageText)
	margin := min(5*time.Second, o.HeartBeat/2)
	sc, err := gostomp.ConnectWithContext(dctx, nc,
		gostomp.ConnOpt.AcceptVersion(gostomp.V12),
		gostomp.ConnOpt.Host(s.VHost),
		gostomp.ConnOpt.Login(s.Login, s.Passcode.Reveal()),
		gostomp.ConnOpt.HeartBeat(o.HeartBeat, o.HeartBeat),
		gostomp.ConnOpt.HeartBeatError(margin),
		gostomp.ConnOpt.DisconnectReceiptTimeout(2*time.Second),
		gostomp.ConnOpt.Logger(stompLogger{o.Logger}))
	if err != nil {
		lcancel()
		_ = nc.Close()
		return nil, connectError(err)
	}
	sub, err := sc.Subscribe("/amq/queue/"+s.Queue, gostomp.AckClientIndividual,
		gostomp.SubscribeOpt.Id(s.Queue), gostomp.SubscribeOpt.Header("prefetch-count", strconv.Itoa(o.Prefetch)))
	if err != nil {
		_ = sc.MustDisconnect()
		lcancel()
		return nil, fmt.Errorf("subscribe to %s: %w", s.Queue, err)
	}
	return &conn{stomp: sc, sub: sub, cancel: lcancel, since: time.Now()}, nil
}

// connectError turns the broker's answer to CONNECT into a RefusedError when it is one.
func connectError(err error) error {
	if se := asStompError(err); se != nil && se.Frame != nil && se.Frame.Command == frame.ERROR {
		return &RefusedError{Message: se.Message, Detail: strings.TrimSpace(string(se.Frame.Body))}
	}
	return fmt.Errorf("stomp connect: %w", err)
}

// streamError classifies the error that ended a subscription. go-stomp reports local failures
// (read timeout, closed socket) as ERROR frames with only a message header; the broker's own
// ERROR frames carry more headers or a body. A broker shutting down (connection_forced) is a
// network event, not a refusal.
func streamError(err error) error {
	if se := asStompError(err); se != nil && se.Frame != nil && (len(se.Frame.Body) > 0 || se.Frame.Header.Len() > 1) {
		msg := se.Frame.Header.Get(frame.Message)
		if strings.Contains(msg, "connection_forced") || strings.Contains(msg, "shutdown") {
			return fmt.Errorf("broker closed the connection: %s", msg)
		}
		return &RefusedError{Message: msg, Detail: strings.TrimSpace(string(se.Frame.Body))}
	}
	return fmt.Errorf("connection lost: %w", err)
}

// asStompError finds go-stomp's Error, which it returns both as a value and as a pointer.
func asStompError(err error) *gostomp.Error {
	var p *gostomp.Error
	if errors.As(err, &p) {
		return p
	}
	var v gostomp.Error
	if errors.As(err, &v) {
		return &v
	}
	return nil
}

// close ends the connection: politely when it is still healthy, at once otherwise.
func (c *conn) close(polite bool) {
	if polite {
		_ = c.stomp.Disconnect()
	} else {
		_ = c.stomp.MustDisconnect()
	}
	c.cancel()
}
