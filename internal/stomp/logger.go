package stomp

import (
	"fmt"

	"go.uber.org/zap"
)

// stompLogger sends go-stomp's own log lines to zap at debug level (its default logger writes
// to the standard library's log, which would break the one-JSON-object-per-line output).
type stompLogger struct{ log *zap.Logger }

func (l stompLogger) Debugf(f string, v ...any) {
	l.log.Debug("stomp library", zap.String("detail", fmt.Sprintf(f, v...)))
}
func (l stompLogger) Infof(f string, v ...any) {
	l.log.Debug("stomp library", zap.String("detail", fmt.Sprintf(f, v...)))
}
func (l stompLogger) Warningf(f string, v ...any) {
	l.log.Debug("stomp library", zap.String("detail", fmt.Sprintf(f, v...)))
}
func (l stompLogger) Errorf(f string, v ...any) {
	l.log.Debug("stomp library", zap.String("detail", fmt.Sprintf(f, v...)))
}
func (l stompLogger) Debug(m string)   { l.log.Debug("stomp library", zap.String("detail", m)) }
func (l stompLogger) Info(m string)    { l.log.Debug("stomp library", zap.String("detail", m)) }
func (l stompLogger) Warning(m string) { l.log.Debug("stomp library", zap.String("detail", m)) }
func (l stompLogger) Error(m string)   { l.log.Debug("stomp library", zap.String("detail", m)) }
