package nodetemplate

import "fmt"

// builtins are text/template's functions of the subset (and and or are evaluated by the
// executor, which must not evaluate what it does not need).
func builtins() map[string]Func {
	return map[string]Func{
		"and": func(...any) (any, error) { return nil, nil }, "or": func(...any) (any, error) { return nil, nil },
		"not": func(args ...any) (any, error) {
			if len(args) != 1 {
				return nil, fmt.Errorf("wrong number of args for not: want 1 got %d", len(args))
			}
			return !truth(args[0]), nil
		},
		"eq": eq,
		"ne": func(args ...any) (any, error) {
			if len(args) != 2 {
				return nil, fmt.Errorf("wrong number of args for ne: want 2 got %d", len(args))
			}
			same, err := eq(args...)
			if err != nil {
				return nil, err
			}
			return !same.(bool), nil
		},
		"len":    length,
		"printf": printf,
	}
}

// String adapts a function of one string, as templates call quote or shq.
func String(name string, f func(string) string) Func {
	return func(args ...any) (any, error) {
		if len(args) != 1 {
			return nil, fmt.Errorf("wrong number of args for %s: want 1 got %d", name, len(args))
		}
		s, ok := args[0].(string)
		if !ok {
			return nil, fmt.Errorf("wrong type for value; expected string; got %T", args[0])
		}
		return f(s), nil
	}
}

// truth is text/template's: false, 0, "", an empty list or map and nil are false; anything
// else (records and other values included) is true.
func truth(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case int:
		return v != 0
	case []any:
		return len(v) > 0
	case map[string]string:
		return len(v) > 0
	}
	return true
}

// eq reports whether the first argument equals any of the others; strings, booleans and
// integers compare with their own kind only.
func eq(args ...any) (any, error) {
	if len(args) < 2 {
		return nil, fmt.Errorf("missing argument for comparison")
	}
	for _, b := range args[1:] {
		same, ok := equal(args[0], b)
		if !ok {
			return nil, fmt.Errorf("incompatible types for comparison: %T and %T", args[0], b)
		}
		if same {
			return true, nil
		}
	}
	return false, nil
}

func equal(a, b any) (same, comparable bool) {
	switch a := a.(type) {
	case string:
		b, ok := b.(string)
		return ok && a == b, ok
	case bool:
		b, ok := b.(bool)
		return ok && a == b, ok
	case int:
		b, ok := b.(int)
		return ok && a == b, ok
	}
	return false, false
}

func length(args ...any) (any, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("wrong number of args for len: want 1 got %d", len(args))
	}
	switch v := args[0].(type) {
	case string:
		return len(v), nil
	case []any:
		return len(v), nil
	case map[string]string:
		return len(v), nil
	}
	return nil, fmt.Errorf("len of type %T", args[0])
}

func printf(args ...any) (any, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("wrong number of args for printf: want at least 1 got 0")
	}
	format, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("wrong type for value; expected string; got %T", args[0])
	}
	return fmt.Sprintf(format, args[1:]...), nil
}
