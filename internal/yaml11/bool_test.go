package yaml11

import "testing"

func TestBool(t *testing.T) {
	cases := []struct {
		in        any
		value, ok bool
	}{
		{true, true, true}, {false, false, true},
		{"yes", true, true}, {"Yes", true, true}, {"YES", true, true}, {"yEs", true, true},
		{"no", false, true}, {"No", false, true}, {"NO", false, true},
		{"on", true, true}, {"On", true, true}, {"ON", true, true},
		{"off", false, true}, {"Off", false, true}, {"OFF", false, true},
		{"y", true, true}, {"Y", true, true}, {"n", false, true}, {"N", false, true},
		{"true", true, true}, {"True", true, true}, {"TRUE", true, true},
		{"false", false, true}, {"False", false, true}, {"FALSE", false, true},
		{"t", true, true}, {"f", false, true}, {"1", true, true}, {"0", false, true},
		{" yes ", true, true},
		{1, true, true}, {0, false, true}, {int64(1), true, true}, {uint64(0), false, true},
		{"", false, false}, {"maybe", false, false}, {"yess", false, false}, {"2", false, false},
		{2, false, false}, {-1, false, false}, {1.5, false, false}, {nil, false, false},
		{[]any{"yes"}, false, false}, {map[string]any{}, false, false},
	}
	for _, c := range cases {
		value, ok := Bool(c.in)
		if value != c.value || ok != c.ok {
			t.Errorf("Bool(%#v) = %v, %v; want %v, %v", c.in, value, ok, c.value, c.ok)
		}
	}
}
