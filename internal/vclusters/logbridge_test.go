package vclusters

import (
	"testing"

	"github.com/sirupsen/logrus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestRemotedialerLogsReachZapAtWarnOnly(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	routeLibraryLogs(zap.New(core))
	logrus.WithField("clientkey", "c-1").Info("Handling backend connection request")
	logrus.WithError(errBoom{}).Error("Error writing ping")
	if logs.Len() != 1 {
		t.Fatalf("%d entries: %v", logs.Len(), logs.All())
	}
	e := logs.All()[0]
	if e.Message != "remotedialer reported a problem" || e.Level != zapcore.WarnLevel ||
		e.ContextMap()["message"] != "Error writing ping" || e.LoggerName != "remotedialer" {
		t.Errorf("entry %+v %v", e, e.ContextMap())
	}
}

type errBoom struct{}

func (errBoom) Error() string { return "boom" }
