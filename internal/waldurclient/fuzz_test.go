package waldurclient

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeOrders feeds arbitrary bytes where a page of orders is expected: decoding must
// never panic, and what decodes must re-encode.
func FuzzDecodeOrders(f *testing.F) {
	f.Add([]byte(`[{"uuid":"a","type":"Create","state":"executing","limits":{"cpu":"2.5","ram":4},"attributes":{"name":"x"}}]`))
	f.Add([]byte(`[{"limits":null,"created":"2026-01-01T00:00:00Z"}]`))
	f.Add([]byte(`[{"limits":{"cpu":"NaN"}}]`))
	f.Add([]byte(`{"detail":"Not found."}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var orders []Order
		if err := json.Unmarshal(data, &orders); err != nil {
			return
		}
		var resources []Resource
		_ = json.Unmarshal(data, &resources)
		if _, err := json.Marshal(orders); err != nil {
			t.Fatalf("decoded orders do not re-encode: %v", err)
		}
	})
}
