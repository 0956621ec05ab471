package vclusters

import (
	"io"

	"github.com/sirupsen/logrus"
	"go.uber.org/zap"
)

// routeLibraryLogs sends what remotedialer logs through logrus (its only logger, a package
// global) to the command's zap logger at warn level and above; its info and debug chatter
// (every handshake, every ping) is dropped. The command calls it once; tests need not.
func routeLibraryLogs(log *zap.Logger) {
	logrus.SetOutput(io.Discard)
	logrus.SetLevel(logrus.WarnLevel)
	logrus.AddHook(logrusHook{log: log.Named("remotedialer")})
}

type logrusHook struct{ log *zap.Logger }

func (logrusHook) Levels() []logrus.Level {
	return []logrus.Level{logrus.PanicLevel, logrus.FatalLevel, logrus.ErrorLevel, logrus.WarnLevel}
}

func (h logrusHook) Fire(e *logrus.Entry) error {
	fields := make([]zap.Field, 0, len(e.Data)+1)
	fields = append(fields, zap.String("message", e.Message))
	for k, v := range e.Data {
		fields = append(fields, zap.Any(k, v))
	}
	h.log.Warn("remotedialer reported a problem", fields...)
	return nil
}
