package guard

import (
	"encoding/json"
	"slices"
)

// flatSchema is an input schema of the plain shape nearly every tool has
// (an object of scalar properties, or lists of them, nothing else
// allowed), checked without the schema validator. It only ever accepts:
// arguments it is not sure of go to the validator, which decides and
// words the error, so it accepts nothing the validator would refuse.
// FuzzFlatSchema holds the two together.
type flatSchema struct {
	props    map[string]flatProp
	required []string
}

// flatProp is one property: its types (of "string", "integer",
// "boolean", "null", "array"), the type of an array's items, and the
// values an enum allows.
type flatProp struct {
	types []string
	items string
	enum  []string
}

// flatSchemaOf returns the flat form of an input schema, or nil when the
// schema uses anything else (then the validator checks every call).
func flatSchemaOf(raw json.RawMessage) *flatSchema {
	var s struct {
		Type                 string                     `json:"type"`
		Properties           map[string]json.RawMessage `json:"properties"`
		Required             []string                   `json:"required"`
		AdditionalProperties *bool                      `json:"additionalProperties"`
	}
	if !onlyKeys(raw, "type", "properties", "required", "additionalProperties", "description", "title") ||
		json.Unmarshal(raw, &s) != nil || s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties {
		return nil
	}
	fs := &flatSchema{props: map[string]flatProp{}, required: s.Required}
	for name, raw := range s.Properties {
		p, ok := flatPropOf(raw)
		if !ok {
			return nil
		}
		fs.props[name] = p
	}
	return fs
}

func flatPropOf(raw json.RawMessage) (flatProp, bool) {
	var p struct {
		Type  json.RawMessage `json:"type"`
		Items json.RawMessage `json:"items"`
		Enum  []string        `json:"enum"`
	}
	if !onlyKeys(raw, "type", "items", "enum", "description", "title") || json.Unmarshal(raw, &p) != nil {
		return flatProp{}, false
	}
	var out flatProp
	var one string
	if json.Unmarshal(p.Type, &one) == nil {
		out.types = []string{one}
	} else if json.Unmarshal(p.Type, &out.types) != nil || len(out.types) == 0 {
		return flatProp{}, false
	}
	for _, t := range out.types {
		if !slices.Contains([]string{"string", "integer", "boolean", "null", "array"}, t) {
			return flatProp{}, false
		}
	}
	if p.Items != nil {
		var items struct {
			Type string `json:"type"`
		}
		if !slices.Contains(out.types, "array") || !onlyKeys(p.Items, "type", "description", "title") ||
			json.Unmarshal(p.Items, &items) != nil || !slices.Contains([]string{"string", "integer", "boolean"}, items.Type) {
			return flatProp{}, false
		}
		out.items = items.Type
	} else if slices.Contains(out.types, "array") {
		return flatProp{}, false
	}
	if p.Enum != nil && (len(p.Enum) == 0 || !slices.Equal(out.types, []string{"string"})) {
		return flatProp{}, false
	}
	out.enum = p.Enum
	return out, true
}

// onlyKeys reports whether raw is a JSON object with no keys but keys.
func onlyKeys(raw json.RawMessage, keys ...string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return false
	}
	for k := range m {
		if !slices.Contains(keys, k) {
			return false
		}
	}
	return true
}

// accepts reports whether args surely match the schema; false means
// "ask the validator", not "invalid".
func (s *flatSchema) accepts(args any) bool {
	m, ok := args.(map[string]any)
	if !ok {
		return false
	}
	for _, r := range s.required {
		if _, ok := m[r]; !ok {
			return false
		}
	}
	for k, v := range m {
		p, ok := s.props[k]
		if !ok || !p.accepts(v) {
			return false
		}
	}
	return true
}

func (p flatProp) accepts(v any) bool {
	for _, t := range p.types {
		if t == "array" {
			if a, ok := v.([]any); ok && a != nil && allOfType(a, p.items) {
				return true
			}
			continue
		}
		if ofType(v, t) {
			return p.enum == nil || t != "string" || slices.Contains(p.enum, v.(string))
		}
	}
	return false
}

func allOfType(a []any, t string) bool {
	for _, v := range a {
		if !ofType(v, t) {
			return false
		}
	}
	return true
}

// ofType reports whether v surely is of the JSON type t. An integer is
// surely one only as a json.Number of plain digits; any other number goes
// to the validator.
func ofType(v any, t string) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "integer":
		n, ok := v.(json.Number)
		return ok && plainInteger(string(n))
	}
	return false
}

// plainInteger reports whether s is an optional minus and 1 to 18 digits.
func plainInteger(s string) bool {
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	if s == "" || len(s) > 18 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
