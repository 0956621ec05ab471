package rke2

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"text/template"

	"github.com/waldur/site-agent/internal/secret"
)

// compatTemplate uses every construct of nodetemplate's subset over NodeConfig's fields.
const compatTemplate = `#cloud-config
{{- /* a comment */}}
hostname: {{ quote .NodeName }}
{{- $c := .ClusterName }}
cluster: {{ printf "%s/%s-%d" $c .Role (len .Disks) | quote }}
{{- if and .Initial (eq .Role "server") }}
initial: true
{{- else if or .ServerURL (ne .Bootstrap "rke2") }}
join: {{ quote (or .ServerURL .RancherURL) }}
{{- else }}
other: {{ not .Initial }}
{{- end }}
labels:
{{- range $k, $v := .Labels }}
  {{ $k }}: {{ quote $v }}
{{- else }} {}
{{- end }}
disks:
{{- range $i, $d := .Disks }}
  - [{{ $i }}, {{ $d.Device }}, {{ .Filesystem }}, {{ $.NodeName }}]
{{- end }}
{{- $n := 0 }}{{ range .Disks }}{{ $n = .MountPoint }}{{ end }}
last_mount: {{ $n }}
vault: {{ .VaultAddr }} {{ .VaultTLSSkipVerify }} {{ shq (reveal .VaultSecretID) }} {{ .VaultSecretID }}
registry: {{ .RegistryConfig }} {{ .PrivateRegistryHost }} {{ .RancherTLSSkipVerify }}
`

// textTemplate is the renderer before nodetemplate: text/template with the same functions.
func textTemplate(t *testing.T, text string) *template.Template {
	t.Helper()
	tt, err := template.New("x").Option("missingkey=error").Funcs(template.FuncMap{
		"quote":  yamlQuote,
		"shq":    func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" },
		"reveal": func(s secret.Secret) string { return s.Reveal() },
	}).Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

// TestRendererMatchesTextTemplate: the shipped template and a site template using the whole
// subset render byte for byte as text/template rendered them, for every kind of node.
func TestRendererMatchesTextTemplate(t *testing.T) {
	sid := secret.New(goldenSecretID)
	defer sid.Forget()
	configs := sampleConfigs(sid)
	more := configs[0]
	more.Labels = map[string]string{"b": "2", "a": "1", LabelRole: "server"}
	more.Disks = append(more.Disks, Disk{Device: "/dev/sdc", Filesystem: "xfs", MountPoint: "/data"})
	none := configs[2]
	none.Labels, none.Disks = nil, nil
	cidrs := configs[3] // an initial rke2 server
	cidrs.ClusterCIDR, cidrs.ServiceCIDR = "10.100.0.0/16", "10.101.0.0/16"
	configs = append(configs, more, none, cidrs)
	for name, text := range map[string]string{"built-in": defaultTemplate, "compat": compatTemplate} {
		c, err := ParseCloudInit(name, text)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		old := textTemplate(t, text)
		for _, cfg := range configs {
			var want, got bytes.Buffer
			if err := old.Execute(&want, &cfg); err != nil {
				t.Fatalf("%s: text/template: %v", name, err)
			}
			if err := c.tmpl.Execute(&got, &cfg); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got.String() != want.String() {
				t.Errorf("%s for %s %s (%s): got\n%s\nwant\n%s", name, cfg.Role, cfg.NodeName, cfg.Bootstrap, got.String(), want.String())
			}
		}
	}
}

// TestTemplateFieldsAreNodeConfigs: NodeConfig.Field and Disk.Field name every exported field
// with its value, and nothing else.
func TestTemplateFieldsAreNodeConfigs(t *testing.T) {
	sid := secret.New(goldenSecretID)
	defer sid.Forget()
	cfg := sampleConfigs(sid)[3]
	v := reflect.ValueOf(cfg)
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		got, ok := cfg.Field(name)
		if !ok {
			t.Errorf("NodeConfig.Field(%q) missing", name)
			continue
		}
		if name == "Disks" {
			if len(got.([]any)) != len(cfg.Disks) || got.([]any)[0] != any(cfg.Disks[0]) {
				t.Errorf("Disks: got %v", got)
			}
			continue
		}
		if !reflect.DeepEqual(got, v.Field(i).Interface()) {
			t.Errorf("NodeConfig.Field(%q) = %v, want %v", name, got, v.Field(i).Interface())
		}
	}
	d := cfg.Disks[0]
	dv := reflect.ValueOf(d)
	for i := range dv.NumField() {
		if got, ok := d.Field(dv.Type().Field(i).Name); !ok || got != dv.Field(i).Interface() {
			t.Errorf("Disk.Field(%q) = %v, %v", dv.Type().Field(i).Name, got, ok)
		}
	}
	for _, r := range []interface{ Field(string) (any, bool) }{&cfg, d} {
		if _, ok := r.Field("Nope"); ok {
			t.Errorf("%T has a field Nope", r)
		}
	}
}

// TestTemplateRefusedAtLoad: an unknown field or function, or a construct outside the subset,
// stops loading with an error naming the setting and what is wrong.
func TestTemplateRefusedAtLoad(t *testing.T) {
	for text, want := range map[string]string{
		"#!/bin/sh\necho {{ .Nope }}\n":                            "can't evaluate field Nope",
		"#!/bin/sh\necho {{ range .Disks }}{{ .Size }}{{ end }}\n": "can't evaluate field Size",
		"#!/bin/sh\necho {{ .Labels.zone }}\n":                     `map has no entry for key "zone"`,
		"#!/bin/sh\necho {{ upper .NodeName }}\n":                  `function "upper" not defined`,
		"#!/bin/sh\necho {{ index .Labels \"a\" }}\n":              `function "index" not defined`,
		"#!/bin/sh\n{{ with .NodeName }}{{ . }}{{ end }}\n":        "{{with}}",
		"#!/bin/sh\n{{ define \"x\" }}a{{ end }}\n":                "{{define}}",
		"#!/bin/sh\necho {{ .VaultSecretID.Reveal }}\n":            "can't evaluate field Reveal",
	} {
		path := filepath.Join(t.TempDir(), "site.tmpl")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := loadCloudInit(path)
		if err == nil || !strings.HasPrefix(err.Error(), "backend_settings.cloud_init_template_file: ") || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error naming the key and %s", text, err, want)
		}
	}
}
