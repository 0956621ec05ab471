package telemetry

import (
	"fmt"
	"io"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Log formats, as log_format takes them.
const (
	LogJSON = "json" // one JSON object a line (the default)
	LogText = "text" // zap's console encoder: time, level, message, then the fields as JSON
)

// NewLogger returns a JSON logger writing to w at level ("debug", "info", "warn", "error").
// Every entry is scrubbed of registered secrets before it is encoded (newScrubCore).
func NewLogger(w io.Writer, level string) (*zap.Logger, error) {
	return NewLoggerFormat(w, level, LogJSON)
}

// NewLoggerFormat returns a logger writing to w at level in format (LogJSON or LogText).
func NewLoggerFormat(w io.Writer, level, format string) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, err
	}
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = "timestamp"
	enc.MessageKey = "event"
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	var encoder zapcore.Encoder
	switch format {
	case LogJSON, "":
		encoder = zapcore.NewJSONEncoder(enc)
	case LogText:
		enc.EncodeLevel = zapcore.CapitalLevelEncoder
		encoder = zapcore.NewConsoleEncoder(enc)
	default:
		return nil, fmt.Errorf("unknown log format %q (json or text)", format)
	}
	core := zapcore.NewCore(encoder, zapcore.Lock(zapcore.AddSync(w)), lvl)
	return zap.New(newScrubCore(core)), nil
}
