package nodetemplate

import (
	"bytes"
	"strings"
	"testing"
	"text/template"
)

// rec is a Record; text/template reads the same data as a map.
type rec map[string]any

func (r rec) Field(name string) (any, bool) { v, ok := r[name]; return v, ok }

func data() rec {
	return rec{"S": "x'y", "B": true, "F": false, "N": 3, "Z": 0, "E": []any{},
		"L": []any{rec{"S": "a"}, rec{"S": "b"}}, "M": map[string]string{"b": "2", "a": "1", "c": "3"}}
}

var upper = map[string]Func{"upper": String("upper", strings.ToUpper)}

// TestMatchesTextTemplate: each construct of the subset renders as text/template renders it.
func TestMatchesTextTemplate(t *testing.T) {
	for _, text := range []string{
		"{{ .S }} {{ .B }} {{ .N }} {{ .L | len }}",
		"{{- /* c */ -}} a {{- .S -}} b",
		"{{ if .F }}f{{ else if .Z }}z{{ else if .E }}e{{ else }}none{{ end }}",
		"{{ range .L }}[{{ .S }} {{ $.N }}]{{ end }}{{ range $i, $r := .L }}{{ $i }}={{ $r.S }};{{ end }}",
		"{{ range $k, $v := .M }}{{ $k }}:{{ $v }},{{ end }}{{ range .M }}{{ . }}{{ end }}{{ .M.b }}",
		"{{ range .E }}x{{ else }}empty{{ end }}{{ range .M }}{{ else }}never{{ end }}",
		"{{ $x := .S }}{{ if .B }}{{ $x = \"in\" }}{{ end }}{{ $x }}",
		"{{ and .B .N }} {{ and .F .N }} {{ or .Z .S }} {{ or .Z .F }} {{ not .E }}",
		"{{ eq .S \"x'y\" }} {{ eq .N 1 2 3 }} {{ ne .B false }} {{ len .L }} {{ len .S }}",
		"{{ printf \"%s-%d-%v\" .S .N .B }} {{ .S | printf \"%q\" | upper }} {{ upper (printf \"%s\" .S) }}",
		"{{ and .F (upper 1) }} {{ or .B (upper 1) }}",
	} {
		want := execText(t, text)
		tmpl, err := Parse("t", text, upper)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		var got bytes.Buffer
		if err := tmpl.Execute(&got, data()); err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if got.String() != want {
			t.Errorf("%q: got %q, want %q", text, got.String(), want)
		}
	}
}

func execText(t *testing.T, text string) string {
	t.Helper()
	tt, err := template.New("t").Option("missingkey=error").Funcs(template.FuncMap{"upper": strings.ToUpper}).Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := tt.Execute(&b, data()); err != nil {
		t.Fatalf("%q: text/template: %v", text, err)
	}
	return b.String()
}

// TestRefuses: constructs outside the subset fail at parse, errors at run time name the place.
func TestRefuses(t *testing.T) {
	for text, want := range map[string]string{
		"{{ with .S }}{{ end }}":             "{{with}} (in {{with .S}}{{end}}) is not supported",
		"{{ define \"x\" }}{{ end }}":        "{{define}}",
		"{{ template \"x\" }}":               "{{template}}",
		"{{ range .L }}{{ break }}{{ end }}": "{{break}}",
		"{{ index .L 0 }}":                   `function "index" not defined`,
		"{{ .S.Len 1 }}":                     "a method call",
		"{{ 1.5 }}":                          "not an integer",
		"{{ nil }}":                          "nil",
		"{{ (.L).S }}":                       "a field of a parenthesised value",
		"{{ $x }}":                           "undefined variable",
	} {
		if _, err := Parse("t", text, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", text, err, want)
		}
	}
	for text, want := range map[string]string{
		"{{ .Nope }}":             `template: t:1:3: executing "t" at <.Nope>: can't evaluate field Nope`,
		"{{ .M.zz }}":             `map has no entry for key "zz"`,
		"{{ range .S }}{{ end }}": "range can't iterate over x'y",
		"{{ eq .S 1 }}":           "incompatible types for comparison",
		"{{ upper .N }}":          "error calling upper: wrong type for value; expected string; got int",
	} {
		tmpl, err := Parse("t", text, upper)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if err := tmpl.Execute(&bytes.Buffer{}, data()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", text, err, want)
		}
	}
}
