package backends

import (
	"context"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/upstream"
)

// The fields that name what a backend works on in its log lines.
const (
	OrderUUIDField    = "order_uuid"
	ResourceUUIDField = "resource_uuid"
)

// WithLogFields returns ctx carrying fields that every backend log line written inside the
// operation carries (see Log) — also the lines of the clients a backend calls, which log
// through upstream.Log. A field replaces an earlier one of the same key.
func WithLogFields(ctx context.Context, fields ...zap.Field) context.Context {
	return upstream.WithLogFields(ctx, fields...)
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
func Log(ctx context.Context, base *zap.Logger) *zap.Logger { return upstream.Log(ctx, base) }
