// Command k8sschema writes the JSON schemas kubeconform validates the Helm
// chart against, made from the Kubernetes API's own OpenAPI document
// (api/openapi-spec/swagger.json of the k8s.io/kubernetes module) and from
// CustomResourceDefinition files (the ServiceMonitor of
// prometheus-operator). Both come from the Go module proxy, so
// scripts/helm-check needs no other network. The schemas are strict as
// kubeconform's own are: an object with properties takes no others, and
// int-or-string fields take either.
//
// Usage: k8sschema -swagger swagger.json [-crd file.yaml ...] -out DIR
//
// Each kind becomes DIR/<kind>-<group>-<version>.json (the core group is
// named by its version, as kubeconform's {{ .Group }} is), matching
// kubeconform -schema-location 'DIR/{{ .ResourceKind }}-{{ .Group }}-{{ .ResourceAPIVersion }}.json'.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	swagger := flag.String("swagger", "", "the Kubernetes OpenAPI v2 document (swagger.json)")
	out := flag.String("out", "", "directory to write the schemas into")
	var crds multi
	flag.Var(&crds, "crd", "a CustomResourceDefinition YAML file (repeatable)")
	flag.Parse()
	if *swagger == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: k8sschema -swagger swagger.json [-crd file.yaml ...] -out DIR")
		os.Exit(2)
	}
	n, err := run(*swagger, crds, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "k8sschema:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "k8sschema: %d schemas in %s\n", n, *out)
}

func run(swagger string, crds []string, out string) (int, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return 0, err
	}
	n, err := fromSwagger(swagger, out)
	if err != nil {
		return 0, err
	}
	for _, f := range crds {
		m, err := fromCRD(f, out)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", f, err)
		}
		n += m
	}
	return n, nil
}

type gvk struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// fileName is where kubeconform's template looks for a kind.
func fileName(g gvk) string {
	group := g.Group
	if group == "" {
		group = g.Version
	}
	return strings.ToLower(g.Kind) + "-" + group + "-" + g.Version + ".json"
}

func fromSwagger(path string, out string) (int, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if len(doc.Definitions) == 0 {
		return 0, fmt.Errorf("%s: no definitions", path)
	}
	names := make([]string, 0, len(doc.Definitions))
	for name := range doc.Definitions {
		names = append(names, name)
	}
	sort.Strings(names)
	n := 0
	for _, name := range names {
		def := doc.Definitions[name]
		kinds, _ := def["x-kubernetes-group-version-kind"].([]any)
		for _, k := range kinds {
			var g gvk
			b, _ := json.Marshal(k)
			if err := json.Unmarshal(b, &g); err != nil || g.Kind == "" {
				continue
			}
			defs := map[string]any{}
			closure(name, doc.Definitions, defs)
			schema := map[string]any{
				"$schema":     "http://json-schema.org/draft-04/schema#",
				"$ref":        "#/definitions/" + name,
				"definitions": strict(defs),
			}
			if err := write(filepath.Join(out, fileName(g)), schema); err != nil {
				return 0, err
			}
			n++
		}
	}
	return n, nil
}

// closure copies name and every definition it refers to, transitively.
func closure(name string, all map[string]map[string]any, into map[string]any) {
	if _, done := into[name]; done {
		return
	}
	def, ok := all[name]
	if !ok {
		return
	}
	into[name] = def
	for _, ref := range refs(def) {
		closure(strings.TrimPrefix(ref, "#/definitions/"), all, into)
	}
}

func refs(v any) []string {
	var found []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "$ref" {
				found = append(found, s)
				continue
			}
			found = append(found, refs(x)...)
		}
	case []any:
		for _, x := range v {
			found = append(found, refs(x)...)
		}
	}
	return found
}

// strict makes every object with properties refuse others, and lets an
// int-or-string (or a Quantity) be either.
func strict(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if f, _ := v["format"].(string); f == "int-or-string" || v["x-kubernetes-int-or-string"] == true {
			return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}}
		}
		out := make(map[string]any, len(v)+1)
		for k, x := range v {
			out[k] = strict(x)
		}
		if _, has := v["properties"]; has {
			if _, set := v["additionalProperties"]; !set {
				out["additionalProperties"] = false
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = strict(x)
		}
		return out
	}
	return v
}

func fromCRD(path string, out string) (int, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var crd struct {
		Kind string `yaml:"kind"`
		Spec struct {
			Group string `yaml:"group"`
			Names struct {
				Kind string `yaml:"kind"`
			} `yaml:"names"`
			Versions []struct {
				Name   string `yaml:"name"`
				Schema struct {
					OpenAPIV3Schema map[string]any `yaml:"openAPIV3Schema"`
				} `yaml:"schema"`
			} `yaml:"versions"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		return 0, err
	}
	if crd.Kind != "CustomResourceDefinition" {
		return 0, errors.New("not a CustomResourceDefinition")
	}
	n := 0
	for _, v := range crd.Spec.Versions {
		if v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		g := gvk{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
		if err := write(filepath.Join(out, fileName(g)), strict(v.Schema.OpenAPIV3Schema)); err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

func write(path string, schema any) error {
	b, err := json.Marshal(schema)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
