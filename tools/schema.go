package tools

import (
	"encoding/json"
	"fmt"
)

// WithEnum restricts the string property prop of t's input schema (or the
// items of an array property) to values, so the model sees the choices
// and the guard rejects anything else before the handler runs. It panics
// on a property the schema does not have: that is a programming error.
func WithEnum(t Tool, prop string, values []string) Tool {
	var schema map[string]any
	if err := json.Unmarshal(t.Tool.RawInputSchema, &schema); err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", t.Tool.Name, err))
	}
	props, _ := schema["properties"].(map[string]any)
	p, ok := props[prop].(map[string]any)
	if !ok {
		panic(fmt.Sprintf("tool %s has no property %q", t.Tool.Name, prop))
	}
	if items, ok := p["items"].(map[string]any); ok {
		p = items
	}
	p["enum"] = values
	raw, err := json.Marshal(schema)
	if err != nil {
		panic(err)
	}
	t.Tool.RawInputSchema = raw
	return t
}
