package nodetemplate

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"text/template/parse"
)

// state is one execution: the output and the variables in scope ($ first).
type state struct {
	t    *Template
	w    io.Writer
	vars []variable
}

type variable struct {
	name  string
	value any
}

// Execute renders the template for data (the template's dot and $) into w. An error names the
// place in the template, as text/template's do.
func (t *Template) Execute(w io.Writer, data any) error {
	if t.tree.Root == nil {
		return nil
	}
	s := &state{t: t, w: w, vars: []variable{{"$", data}}}
	return s.walk(data, t.tree.Root)
}

func (s *state) errorf(n parse.Node, format string, args ...any) error {
	loc, ctx := s.t.tree.ErrorContext(n)
	return fmt.Errorf("template: %s: executing %q at <%s>: %s", loc, s.t.name, ctx, fmt.Sprintf(format, args...))
}

func (s *state) walk(dot any, n parse.Node) error {
	switch n := n.(type) {
	case *parse.ListNode:
		for _, c := range n.Nodes {
			if err := s.walk(dot, c); err != nil {
				return err
			}
		}
	case *parse.TextNode:
		_, err := s.w.Write(n.Text)
		return err
	case *parse.ActionNode:
		v, err := s.evalPipeline(dot, n.Pipe)
		if err != nil || len(n.Pipe.Decl) > 0 {
			return err
		}
		_, err = fmt.Fprint(s.w, v)
		return err
	case *parse.IfNode:
		defer s.pop(len(s.vars))
		v, err := s.evalPipeline(dot, n.Pipe)
		if err != nil {
			return err
		}
		if truth(v) {
			return s.walk(dot, n.List)
		} else if n.ElseList != nil {
			return s.walk(dot, n.ElseList)
		}
	case *parse.RangeNode:
		return s.walkRange(dot, n)
	}
	return nil // comments; the rest was refused by Parse
}

func (s *state) pop(mark int) { s.vars = s.vars[:mark] }

// walkRange runs the body once per element of a list, or per key of a map in key order, as
// text/template does; an empty one runs {{else}}.
func (s *state) walkRange(dot any, r *parse.RangeNode) error {
	defer s.pop(len(s.vars))
	v, err := s.evalPipeline(dot, r.Pipe)
	if err != nil {
		return err
	}
	mark := len(s.vars)
	one := func(key, elem any) error {
		switch len(r.Pipe.Decl) {
		case 1:
			s.vars[mark-1].value = elem
		case 2:
			s.vars[mark-2].value, s.vars[mark-1].value = key, elem
		}
		defer s.pop(mark)
		return s.walk(elem, r.List)
	}
	n := 0
	switch v := v.(type) {
	case []any:
		for i, e := range v {
			if err := one(i, e); err != nil {
				return err
			}
		}
		n = len(v)
	case map[string]string:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if err := one(k, v[k]); err != nil {
				return err
			}
		}
		n = len(v)
	default:
		return s.errorf(r, "range can't iterate over %v (%T)", v, v)
	}
	if n == 0 && r.ElseList != nil {
		return s.walk(dot, r.ElseList)
	}
	return nil
}

// evalPipeline evaluates the commands, each one's value the last argument of the next, and
// declares or assigns its variables.
func (s *state) evalPipeline(dot any, p *parse.PipeNode) (any, error) {
	var v any
	for i, cmd := range p.Cmds {
		var final []any
		if i > 0 {
			final = []any{v}
		}
		var err error
		if v, err = s.evalCommand(dot, cmd, final); err != nil {
			return nil, err
		}
	}
	for _, d := range p.Decl {
		if !p.IsAssign {
			s.vars = append(s.vars, variable{d.Ident[0], v})
			continue
		}
		if err := s.setVar(d, v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func (s *state) setVar(d *parse.VariableNode, v any) error {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == d.Ident[0] {
			s.vars[i].value = v
			return nil
		}
	}
	return s.errorf(d, "undefined variable: %s", d.Ident[0])
}

func (s *state) evalCommand(dot any, cmd *parse.CommandNode, final []any) (any, error) {
	if id, ok := cmd.Args[0].(*parse.IdentifierNode); ok {
		return s.call(dot, id, cmd.Args[1:], final)
	}
	return s.evalArg(dot, cmd.Args[0])
}

// evalArg evaluates one operand; an identifier is a call of a function without arguments.
func (s *state) evalArg(dot any, n parse.Node) (any, error) {
	switch n := n.(type) {
	case *parse.DotNode:
		return dot, nil
	case *parse.FieldNode:
		return s.fields(n, dot, n.Ident)
	case *parse.VariableNode:
		for i := len(s.vars) - 1; i >= 0; i-- {
			if s.vars[i].name == n.Ident[0] {
				return s.fields(n, s.vars[i].value, n.Ident[1:])
			}
		}
		return nil, s.errorf(n, "undefined variable: %s", n.Ident[0])
	case *parse.StringNode:
		return n.Text, nil
	case *parse.BoolNode:
		return n.True, nil
	case *parse.NumberNode:
		return int(n.Int64), nil
	case *parse.PipeNode:
		return s.evalPipeline(dot, n)
	case *parse.IdentifierNode:
		return s.call(dot, n, nil, nil)
	}
	return nil, s.errorf(n, "cannot evaluate %s", n)
}

// fields follows a chain of field names from v.
func (s *state) fields(n parse.Node, v any, names []string) (any, error) {
	for _, name := range names {
		switch r := v.(type) {
		case Record:
			f, ok := r.Field(name)
			if !ok {
				return nil, s.errorf(n, "can't evaluate field %s in type %T", name, v)
			}
			v = f
		case map[string]string:
			f, ok := r[name]
			if !ok {
				return nil, s.errorf(n, "map has no entry for key %q", name)
			}
			v = f
		default:
			return nil, s.errorf(n, "can't evaluate field %s in type %T", name, v)
		}
	}
	return v, nil
}

// call calls a function: and and or evaluate their arguments only as far as they must.
func (s *state) call(dot any, id *parse.IdentifierNode, argNodes []parse.Node, final []any) (any, error) {
	if id.Ident == "and" || id.Ident == "or" {
		return s.andOr(dot, id, argNodes, final)
	}
	args := make([]any, 0, len(argNodes)+len(final))
	for _, a := range argNodes {
		v, err := s.evalArg(dot, a)
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	v, err := s.t.funcs[id.Ident](append(args, final...)...)
	if err != nil {
		return nil, s.errorf(id, "error calling %s: %v", id.Ident, err)
	}
	return v, nil
}

func (s *state) andOr(dot any, id *parse.IdentifierNode, argNodes []parse.Node, final []any) (any, error) {
	if len(argNodes)+len(final) == 0 {
		return nil, s.errorf(id, "wrong number of args for %s: want at least 1 got 0", id.Ident)
	}
	var v any
	for i := 0; i < len(argNodes)+len(final); i++ {
		if i < len(argNodes) {
			var err error
			if v, err = s.evalArg(dot, argNodes[i]); err != nil {
				return nil, err
			}
		} else {
			v = final[i-len(argNodes)]
		}
		if truth(v) == (id.Ident == "or") {
			return v, nil
		}
	}
	return v, nil
}
