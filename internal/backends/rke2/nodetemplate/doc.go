// Package nodetemplate renders the rke2 backend's cloud-init templates (the built-in one and a
// site's cloud_init_template_file) without reflection: the subset of Go's text/template
// language they need, parsed by text/template/parse (the same syntax, positions and parse
// errors) and executed over data that names its own fields (Record).
//
// Why not text/template: executing a template calls reflect.Value.MethodByName with names
// known only at run time, so the linker must keep every exported method of every type that
// may reach an interface (golang/go#62257). With the rke2 backend that cost the release binary
// about 5 MB and the idle agent several MiB of resident memory, though an idle agent renders
// nothing. This package gives the same output for the subset (tests compare it with
// text/template) and refuses the rest at parse time, naming the construct.
//
// The subset: text, comments and {{- -}} trimming; {{ pipeline }} printing; {{if}} with
// {{else if}} and {{else}}; {{range}} over lists and maps (maps in key order) with one or two
// variables and {{else}}; variables ($, $x := …, $x = …); fields of the data and of records
// (.A.B, $x.A); string, integer and boolean constants; parenthesised pipelines and | chains;
// the functions and, or, not, eq, ne, len and printf, plus those the caller adds. Not in it:
// {{with}}, {{define}}, {{template}}, {{block}}, {{break}}, {{continue}}, method calls,
// index, slice, call, html, js, urlquery, print and println, comparisons other than eq and ne.
//
// It imports nothing of the agent: the rke2 backend gives it the data and functions.
package nodetemplate
