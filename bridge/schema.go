package bridge

import (
	"encoding/json"
	"fmt"
	"sort"
)

// maxSchemaDepth bounds the nesting AdaptSchema walks; MCP tool schemas
// come from the server, which may be any server.
const maxSchemaDepth = 32

// geminiKeywords are the JSON Schema keywords Gemini's
// parametersJsonSchema accepts. Every other keyword is either dropped (an
// annotation or a constraint the guard still enforces server-side) or makes
// the schema unadaptable (see unadaptable).
var geminiKeywords = map[string]bool{
	"$id": true, "$defs": true, "$ref": true, "$anchor": true,
	"type": true, "format": true, "title": true, "description": true,
	"enum": true, "items": true, "prefixItems": true, "minItems": true, "maxItems": true,
	"minimum": true, "maximum": true, "anyOf": true, "oneOf": true,
	"properties": true, "additionalProperties": true, "required": true, "propertyOrdering": true,
}

// unadaptable are keywords whose meaning cannot be kept by dropping them:
// the model would be told a different shape than the one the tool takes.
var unadaptable = map[string]bool{
	"allOf": true, "not": true, "if": true, "then": true, "else": true,
	"patternProperties": true, "dependentSchemas": true, "dependentRequired": true,
	"$dynamicRef": true, "unevaluatedProperties": true, "unevaluatedItems": true,
}

// AdaptSchema converts an MCP tool input schema into a value for
// FunctionDeclaration.ParametersJsonSchema. It keeps the keywords Gemini
// accepts, turns const into a one-value enum, drops annotations and
// constraints Gemini rejects (the server's guard still validates the real
// schema), and returns an error when the schema's meaning cannot be kept,
// so that the caller skips the tool with a warning. dropped lists the
// keywords removed, for that warning.
func AdaptSchema(raw json.RawMessage) (schema map[string]any, dropped []string, err error) {
	if len(raw) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil, nil
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, nil, fmt.Errorf("input schema is not a JSON object: %w", err)
	}
	if t, ok := root["type"]; ok && t != "object" {
		return nil, nil, fmt.Errorf("input schema type is %v, Gemini needs an object", t)
	}
	root["type"] = "object"
	seen := map[string]bool{}
	out, err := adaptNode(root, 0, seen)
	if err != nil {
		return nil, nil, err
	}
	for k := range seen {
		dropped = append(dropped, k)
	}
	sort.Strings(dropped)
	return out.(map[string]any), dropped, nil
}

// adaptNode adapts one schema node and, recursively, its subschemas.
func adaptNode(node any, depth int, dropped map[string]bool) (any, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("input schema nests deeper than %d levels", maxSchemaDepth)
	}
	m, ok := node.(map[string]any)
	if !ok {
		if b, isBool := node.(bool); isBool && b {
			return map[string]any{}, nil // `true` accepts anything
		}
		return nil, fmt.Errorf("subschema %v is not an object", node)
	}
	out := map[string]any{}
	for k, v := range m {
		if unadaptable[k] {
			return nil, fmt.Errorf("input schema uses %q, which Gemini does not support", k)
		}
		if k == "const" {
			out["enum"] = []any{v}
			continue
		}
		if !geminiKeywords[k] {
			dropped[k] = true
			continue
		}
		av, err := adaptKeyword(k, v, depth, dropped)
		if err != nil {
			return nil, err
		}
		out[k] = av
	}
	return out, checkEnum(out)
}

// adaptKeyword adapts the subschemas under keyword k.
func adaptKeyword(k string, v any, depth int, dropped map[string]bool) (any, error) {
	switch k {
	case "properties", "$defs":
		props, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%q is not an object", k)
		}
		out := make(map[string]any, len(props))
		for name, sub := range props {
			a, err := adaptNode(sub, depth+1, dropped)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", k, name, err)
			}
			out[name] = a
		}
		return out, nil
	case "items", "additionalProperties":
		if b, ok := v.(bool); ok {
			return b, nil
		}
		return adaptNode(v, depth+1, dropped)
	case "anyOf", "oneOf", "prefixItems":
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%q is not a list", k)
		}
		out := make([]any, len(list))
		for i, sub := range list {
			a, err := adaptNode(sub, depth+1, dropped)
			if err != nil {
				return nil, err
			}
			out[i] = a
		}
		return out, nil
	}
	return v, nil
}

// checkEnum refuses enums Gemini cannot take: only strings and numbers.
func checkEnum(node map[string]any) error {
	list, ok := node["enum"].([]any)
	if !ok {
		return nil
	}
	for _, v := range list {
		switch v.(type) {
		case string, float64:
		default:
			return fmt.Errorf("enum value %v is not a string or number", v)
		}
	}
	return nil
}
