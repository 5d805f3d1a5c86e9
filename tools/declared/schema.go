package declared

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/workspacepath"
)

// InputSchema generates t's JSON Schema: an object of exactly the declared
// params (additionalProperties false), the required ones listed, each with
// its description and bounds.
func InputSchema(t configs.DeclaredTool) json.RawMessage {
	props := map[string]any{}
	required := []string{}
	for _, p := range t.Params {
		props[p.Name] = paramSchema(p)
		if p.Required {
			required = append(required, p.Name)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // maps of strings and numbers always encode
	}
	return b
}

func paramSchema(p configs.ToolParam) map[string]any {
	s := map[string]any{"description": paramDescription(p)}
	switch p.Type {
	case configs.ParamString:
		s["type"] = "string"
		s["maxLength"] = maxLength(p)
		if p.Pattern != "" {
			s["pattern"] = anchored(p.Pattern)
		}
		if len(p.Enum) > 0 {
			s["enum"] = p.Enum
		}
	case configs.ParamInteger:
		s["type"] = "integer"
		if p.Minimum != nil {
			s["minimum"] = *p.Minimum
		}
		if p.Maximum != nil {
			s["maximum"] = *p.Maximum
		}
	case configs.ParamBoolean:
		s["type"] = "boolean"
	case configs.ParamFilepath:
		s["type"] = "string"
		s["maxLength"] = workspacepath.MaxPathBytes
	case configs.ParamURL:
		s["type"] = "string"
		s["format"] = "uri"
		s["maxLength"] = MaxURLLength
	}
	return s
}

// anchored makes a pattern match whole values, as the operator means it
// (JSON Schema patterns match anywhere).
func anchored(pattern string) string { return `^(?:` + pattern + `)$` }

func maxLength(p configs.ToolParam) int {
	if p.MaxLength > 0 {
		return p.MaxLength
	}
	return DefaultParamMaxLength
}

// paramDescription is the operator's description plus the rules the value
// must follow, so the model can get it right the first time.
func paramDescription(p configs.ToolParam) string {
	var rules []string
	switch p.Type {
	case configs.ParamString:
		if p.Pattern != "" {
			rules = append(rules, "must match "+anchored(p.Pattern))
		}
		rules = append(rules, fmt.Sprintf("at most %d characters", maxLength(p)))
	case configs.ParamInteger:
		if p.Minimum != nil {
			rules = append(rules, fmt.Sprintf("at least %d", *p.Minimum))
		}
		if p.Maximum != nil {
			rules = append(rules, fmt.Sprintf("at most %d", *p.Maximum))
		}
	case configs.ParamFilepath:
		rules = append(rules, `a path relative to the workspace root, e.g. "src/main.go"; it must exist and stay inside the workspace`)
	case configs.ParamURL:
		rules = append(rules, fmt.Sprintf("an absolute %s URL on %s", strings.Join(schemes(p), " or "), strings.Join(p.Hosts, ", ")))
	}
	if p.AllowFlagLike {
		rules = append(rules, `may start with "-"`)
	}
	d := strings.TrimSpace(p.Description)
	if d == "" {
		d = "The " + strings.ReplaceAll(p.Name, "_", " ") + "."
	}
	if len(rules) == 0 {
		return d
	}
	return d + " (" + strings.Join(rules, "; ") + ")"
}

func schemes(p configs.ToolParam) []string {
	if len(p.Schemes) > 0 {
		return p.Schemes
	}
	return []string{"https"}
}
