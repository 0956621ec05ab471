package waldurclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Number decodes a JSON number or a numeric string (Waldur sends decimals as strings in some
// places and as numbers in others).
type Number float64

// UnmarshalJSON implements json.Unmarshaler.
func (n *Number) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*n = 0
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s == "" {
			*n = 0
			return nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("not a finite number: %q", s)
		}
		*n = Number(f)
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = Number(f)
	return nil
}

// Quantities decodes a component→amount map whose amounts may be numbers or numeric strings.
type Quantities map[string]float64

// UnmarshalJSON implements json.Unmarshaler; null and {} both decode to an empty map.
func (q *Quantities) UnmarshalJSON(b []byte) error {
	var raw map[string]Number
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := make(Quantities, len(raw))
	for k, v := range raw {
		out[k] = float64(v)
	}
	*q = out
	return nil
}
