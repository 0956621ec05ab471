package backends

import (
	"context"

	"go.uber.org/zap"
)

// The fields that name what a backend works on in its log lines.
const (
	OrderUUIDField    = "order_uuid"
	ResourceUUIDField = "resource_uuid"
)

type logFieldsKey struct{}

// WithLogFields returns ctx carrying fields that every backend log line written inside the
// operation carries (see Log). A field replaces an earlier one of the same key.
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

// ForOrder is WithLogFields with the order's UUID and, when it has one, its resource's.
func ForOrder(ctx context.Context, orderUUID, resourceUUID string) context.Context {
	fields := []zap.Field{zap.String(OrderUUIDField, orderUUID)}
	if resourceUUID != "" {
		fields = append(fields, zap.String(ResourceUUIDField, resourceUUID))
	}
	return WithLogFields(ctx, fields...)
}

// ForResource is WithLogFields with the resource's UUID.
func ForResource(ctx context.Context, resourceUUID string) context.Context {
	return WithLogFields(ctx, zap.String(ResourceUUIDField, resourceUUID))
}

// Log is the logger a backend writes with inside an operation: its own logger (base) with the
// fields the caller put in ctx — the order or resource worked on. Backends log through it
// wherever a context is at hand.
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
