package tunnel

import (
	"time"

	"github.com/gorilla/websocket"
	"github.com/rancher/remotedialer"
)

// KeepaliveHandlers replace the ping and pong handlers remotedialer v0.6.1 installs on a
// session's websocket (wsconn.go setupDeadline). Its handlers call SetWriteDeadline from the
// reading goroutine while other goroutines write — gorilla/websocket allows one writer at a time
// and reads the write deadline unlocked in every frame write, a data race under -race (still so
// in rancher/remotedialer's main branch). These do what matters of theirs: a ping is answered
// with a pong (WriteControl may run concurrently with the other writes) and either frame extends
// the read deadline by PingWaitDuration, which is how a session notices a silent peer. Writes
// keep their own deadlines (remotedialer gives each message one). Call it after creating the
// session and before Serve.
func KeepaliveHandlers(ws *websocket.Conn) {
	ws.SetPingHandler(func(data string) error {
		if err := ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(remotedialer.PingWaitDuration)); err != nil {
			return err
		}
		return ws.SetReadDeadline(time.Now().Add(remotedialer.PingWaitDuration))
	})
	ws.SetPongHandler(func(string) error {
		return ws.SetReadDeadline(time.Now().Add(remotedialer.PingWaitDuration))
	})
}
