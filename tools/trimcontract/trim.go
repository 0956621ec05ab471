package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// componentSections are the components/* maps whose entries are kept when referenced.
var componentSections = []string{
	"schemas", "responses", "parameters", "examples", "requestBodies",
	"headers", "securitySchemes", "links", "callbacks",
}

// trim returns a new document holding openapi, info and security of doc, the listed
// operations (plus path-level parameters) and every component they reference, directly or
// transitively. Every security scheme named by a kept operation is kept too. It fails when
// an operation is missing, naming all the missing ones.
func trim(doc *yaml.Node, ops []operation) (*yaml.Node, error) {
	root, err := documentMapping(doc)
	if err != nil {
		return nil, err
	}
	paths := mappingValue(root, "paths")
	if paths == nil {
		return nil, errors.New("contract has no paths")
	}
	keptPaths, missing := keepOperations(paths, ops)
	if len(missing) > 0 {
		return nil, fmt.Errorf("operations missing from the contract: %s", strings.Join(missing, "; "))
	}
	components := mappingValue(root, "components")
	refs := collectRefs(components, keptPaths, root)

	out := &yaml.Node{Kind: yaml.MappingNode}
	for _, key := range []string{"openapi", "info"} {
		if v := mappingValue(root, key); v != nil {
			appendPair(out, key, v)
		}
	}
	if v := mappingValue(root, "security"); v != nil {
		appendPair(out, "security", v)
	}
	appendPair(out, "paths", keptPaths)
	if keptComponents := filterComponents(components, refs); keptComponents != nil {
		appendPair(out, "components", keptComponents)
	}
	return &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{out}}, nil
}

func documentMapping(doc *yaml.Node) (*yaml.Node, error) {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if doc.Kind != yaml.MappingNode {
		return nil, errors.New("contract is not a YAML mapping")
	}
	return doc, nil
}

// keepOperations builds the trimmed paths mapping in the order of the original document.
func keepOperations(paths *yaml.Node, ops []operation) (*yaml.Node, []string) {
	wanted := map[string]map[string]bool{}
	for _, op := range ops {
		if wanted[op.Path] == nil {
			wanted[op.Path] = map[string]bool{}
		}
		wanted[op.Path][op.Method] = true
	}
	found := map[string]bool{}
	out := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(paths.Content); i += 2 {
		path, item := paths.Content[i].Value, paths.Content[i+1]
		methods := wanted[path]
		if methods == nil || item.Kind != yaml.MappingNode {
			continue
		}
		kept := &yaml.Node{Kind: yaml.MappingNode}
		for j := 0; j+1 < len(item.Content); j += 2 {
			key := item.Content[j].Value
			if methods[key] || key == "parameters" || key == "servers" {
				kept.Content = append(kept.Content, item.Content[j], item.Content[j+1])
				if methods[key] {
					found[key+" "+path] = true
				}
			}
		}
		appendPair(out, path, kept)
	}
	var missing []string
	for _, op := range ops {
		if !found[op.Method+" "+op.Path] {
			missing = append(missing, strings.ToUpper(op.Method)+" "+op.Path)
		}
	}
	return out, missing
}

// collectRefs walks the kept paths and, transitively, every referenced component.
// It returns the referenced names per components section.
func collectRefs(components, keptPaths, root *yaml.Node) map[string]map[string]bool {
	refs := map[string]map[string]bool{}
	var queue []*yaml.Node
	add := func(section, name string) {
		if refs[section] == nil {
			refs[section] = map[string]bool{}
		}
		if refs[section][name] {
			return
		}
		refs[section][name] = true
		if target := mappingValue(mappingValue(components, section), name); target != nil {
			queue = append(queue, target)
		}
	}
	visit := func(n *yaml.Node) {
		walk(n, func(key, value *yaml.Node) {
			if key.Value == "$ref" && value.Kind == yaml.ScalarNode {
				if section, name, ok := parseLocalRef(value.Value); ok {
					add(section, name)
				}
			}
		})
		for _, scheme := range securitySchemeNames(n) {
			add("securitySchemes", scheme)
		}
	}
	visit(keptPaths)
	if security := mappingValue(root, "security"); security != nil {
		visit(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{scalar("security"), security}})
	}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		visit(next)
	}
	return refs
}

// securitySchemeNames lists the scheme names used in every `security:` list under n.
func securitySchemeNames(n *yaml.Node) []string {
	var names []string
	walk(n, func(key, value *yaml.Node) {
		if key.Value != "security" || value.Kind != yaml.SequenceNode {
			return
		}
		for _, requirement := range value.Content {
			for i := 0; i+1 < len(requirement.Content); i += 2 {
				names = append(names, requirement.Content[i].Value)
			}
		}
	})
	sort.Strings(names)
	return names
}

func filterComponents(components *yaml.Node, refs map[string]map[string]bool) *yaml.Node {
	if components == nil {
		return nil
	}
	out := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(components.Content); i += 2 {
		section, entries := components.Content[i].Value, components.Content[i+1]
		names := refs[section]
		if len(names) == 0 || entries.Kind != yaml.MappingNode {
			continue
		}
		kept := &yaml.Node{Kind: yaml.MappingNode}
		for j := 0; j+1 < len(entries.Content); j += 2 {
			if names[entries.Content[j].Value] {
				kept.Content = append(kept.Content, entries.Content[j], entries.Content[j+1])
			}
		}
		appendPair(out, section, kept)
	}
	return out
}

// parseLocalRef splits "#/components/<section>/<name>".
func parseLocalRef(ref string) (section, name string, ok bool) {
	rest, found := strings.CutPrefix(ref, "#/components/")
	if !found {
		return "", "", false
	}
	section, name, ok = strings.Cut(rest, "/")
	if !ok || strings.Contains(name, "/") {
		return "", "", false
	}
	for _, s := range componentSections {
		if s == section {
			return section, name, true
		}
	}
	return "", "", false
}

// walk calls fn for every key/value pair of every mapping reachable from n.
func walk(n *yaml.Node, fn func(key, value *yaml.Node)) {
	if n == nil {
		return
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			fn(n.Content[i], n.Content[i+1])
		}
	}
	for _, c := range n.Content {
		walk(c, fn)
	}
}

func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func appendPair(m *yaml.Node, key string, value *yaml.Node) {
	m.Content = append(m.Content, scalar(key), value)
}

func scalar(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
}
