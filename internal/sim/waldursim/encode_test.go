package waldursim

import (
	"encoding/json"
	"math"
	"testing"
)

func TestMarshalJSONMatchesEncodingJSON(t *testing.T) {
	tests := []struct {
		name string
		v    any
	}{
		{"nil", nil},
		{"plain string", "hello"},
		{"escapes", "quote\" back\\ <tag> & \n tab\t \u00e9 \u2028"},
		{"numbers", []any{0.0, 1.0, -3.0, 12.5, 1e21, 1e20, 1e-7, 0.000001, 123456789.125, 7}},
		{"bools", []any{true, false}},
		{"nested", map[string]any{"b": map[string]any{"z": []any{1.5, "x", nil}, "a": map[string]any{}}, "a": []any{}}},
		{"other types fall back", map[string]any{"strings": []string{"a", "b"}, "floats": map[string]float64{"cpu": 1.5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := marshalJSON(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
	if _, err := marshalJSON(map[string]any{"x": math.NaN()}); err == nil {
		t.Error("NaN encoded without error")
	}
}
