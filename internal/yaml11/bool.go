package yaml11

import "strings"

// words are the spellings read as booleans, lower-cased: YAML 1.1's (as PyYAML resolves
// them: yes/no, on/off, true/false) and those pydantic's lax bool accepts besides (y/n, t/f,
// 1/0), in any letter case.
var words = map[string]bool{
	"true": true, "yes": true, "y": true, "on": true, "t": true, "1": true,
	"false": false, "no": false, "n": false, "off": false, "f": false, "0": false,
}

// Bool reads v as a boolean: a YAML boolean, one of the words above (surrounding spaces
// ignored), or the whole numbers 0 and 1 (pydantic's lax mode). ok is false for anything else.
func Bool(v any) (value, ok bool) {
	switch t := v.(type) {
	case bool:
		return t, true
	case string:
		value, ok = words[strings.ToLower(strings.TrimSpace(t))]
		return value, ok
	case int:
		return t == 1, t == 0 || t == 1
	case int64:
		return t == 1, t == 0 || t == 1
	case uint64:
		return t == 1, t == 0 || t == 1
	}
	return false, false
}
