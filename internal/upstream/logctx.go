package upstream

import (
	"context"

	"go.uber.org/zap"
)

type logFieldsKey struct{}

// WithLogFields returns ctx carrying fields that every log line written with Log inside the
// operation carries: what the work is for (backends name the order and resource), for the
// clients of every upstream as much as for the backends above them. A field replaces an
// earlier one of the same key.
func WithLogFields(ctx context.Context, fields ...zap.Field) context.Context {
	prev, _ := ctx.Value(logFieldsKey{}).([]zap.Field)
	out := make([]zap.Field, 0, len(prev)+len(fields))
	for _, p := range prev {
		if !hasKey(fields, p.Key) {
			out = append(out, p)
		}
	}
	return context.WithValue(ctx, logFieldsKey{}, append(out, fields...))
}

// Log is base with the fields ctx carries (base itself when it carries none).
func Log(ctx context.Context, base *zap.Logger) *zap.Logger {
	fields, _ := ctx.Value(logFieldsKey{}).([]zap.Field)
	if len(fields) == 0 {
		return base
	}
	return base.With(fields...)
}

func hasKey(fields []zap.Field, key string) bool {
	for _, f := range fields {
		if f.Key == key {
			return true
		}
	}
	return false
}
