package nodetemplate

import (
	"fmt"
	"maps"
	"text/template/parse"
)

// Record is data whose fields a template reads (.Name): Field returns the value of a field
// and whether there is one. Values are strings, booleans, integers, lists ([]any), maps
// (map[string]string), Records, or anything else, which the template can only print (with
// fmt) or pass to a function.
type Record interface {
	Field(name string) (any, bool)
}

// Func is a function a template may call; it gets its arguments as evaluated.
type Func func(args ...any) (any, error)

// Template is a parsed template.
type Template struct {
	name  string
	tree  *parse.Tree
	funcs map[string]Func
}

// Parse parses text as a template named name (the name appears in errors) with the built-in
// functions and funcs. A construct outside the subset (see the package documentation) is an
// error naming it and its line.
func Parse(name, text string, funcs map[string]Func) (*Template, error) {
	all := builtins()
	maps.Copy(all, funcs)
	known := make(map[string]any, len(all))
	for k, f := range all {
		known[k] = f
	}
	trees, err := parse.Parse(name, text, "", "", known)
	if err != nil {
		return nil, err
	}
	tree := trees[name]
	for other := range trees {
		if other != name {
			return nil, fmt.Errorf("template: %s: {{define}} and {{block}} (%q) are not supported", name, other)
		}
	}
	t := &Template{name: name, tree: tree, funcs: all}
	if tree.Root != nil {
		if err := t.check(tree.Root); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// unsupported is the parse-time error for a construct outside the subset.
func (t *Template) unsupported(n parse.Node, what string) error {
	loc, ctx := t.tree.ErrorContext(n)
	return fmt.Errorf("template: %s: %s (in %s) is not supported by site-agent's renderer (docs/rke2.md lists what is)", loc, what, ctx)
}

// check walks the tree and refuses what execution would not do.
func (t *Template) check(n parse.Node) error {
	switch n := n.(type) {
	case *parse.ListNode:
		for _, c := range n.Nodes {
			if err := t.check(c); err != nil {
				return err
			}
		}
	case *parse.TextNode, *parse.CommentNode:
	case *parse.ActionNode:
		return t.checkPipe(n.Pipe)
	case *parse.IfNode:
		return t.checkBranch(&n.BranchNode)
	case *parse.RangeNode:
		if len(n.Pipe.Decl) > 2 {
			return t.unsupported(n, "a range with more than two variables")
		}
		return t.checkBranch(&n.BranchNode)
	case *parse.WithNode:
		return t.unsupported(n, "{{with}}")
	case *parse.TemplateNode:
		return t.unsupported(n, "{{template}}")
	case *parse.BreakNode, *parse.ContinueNode:
		return t.unsupported(n, "{{break}} and {{continue}}")
	default:
		return t.unsupported(n, fmt.Sprintf("%T", n))
	}
	return nil
}

func (t *Template) checkBranch(b *parse.BranchNode) error {
	if err := t.checkPipe(b.Pipe); err != nil {
		return err
	}
	for _, l := range []*parse.ListNode{b.List, b.ElseList} {
		if l != nil {
			if err := t.check(l); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *Template) checkPipe(p *parse.PipeNode) error {
	for i, cmd := range p.Cmds {
		if _, fn := cmd.Args[0].(*parse.IdentifierNode); !fn && (len(cmd.Args) > 1 || i > 0) {
			return t.unsupported(cmd, "arguments to a value that is not a function (a method call?)")
		}
		for _, a := range cmd.Args {
			if err := t.checkArg(a); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *Template) checkArg(n parse.Node) error {
	switch n := n.(type) {
	case *parse.FieldNode, *parse.VariableNode, *parse.DotNode, *parse.StringNode, *parse.BoolNode, *parse.IdentifierNode:
	case *parse.NumberNode:
		if !n.IsInt {
			return t.unsupported(n, "a number that is not an integer")
		}
	case *parse.PipeNode:
		if len(n.Decl) > 0 {
			return t.unsupported(n, "a variable declared inside parentheses")
		}
		return t.checkPipe(n)
	case *parse.ChainNode:
		return t.unsupported(n, "a field of a parenthesised value")
	case *parse.NilNode:
		return t.unsupported(n, "nil")
	default:
		return t.unsupported(n, fmt.Sprintf("%T", n))
	}
	return nil
}
