package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// What the clients of docs/clients.md accept in a tool definition. Each
// limit is the tightest one a tested client (or the model API behind it)
// puts on what toolwarden sends.
const (
	// clientPrefix is the longest prefix a client adds to a tool's name:
	// Claude Code's mcp__<server>__ with the server named "toolwarden".
	clientPrefix = "mcp__toolwarden__"
	// maxPrefixedName: the Anthropic and OpenAI APIs take tool names of
	// at most 64 characters of [a-zA-Z0-9_-].
	maxPrefixedName = 64
	// maxDescription: Claude Code 2.1.331 cuts MCP tool descriptions at
	// 4096 characters (MAX_MCP_DESCRIPTION_LENGTH's default).
	maxDescription = 4096
)

// portableKeywords are the JSON Schema keywords every tested client keeps:
// Gemini's function declarations drop or refuse the rest (the bridge
// leaves out a tool whose schema needs allOf, not, if or
// patternProperties), and OpenAI's function parameters take this subset.
var portableKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true, "items": true,
	"enum": true, "description": true, "title": true, "default": true,
	"minimum": true, "maximum": true, "minItems": true, "maxItems": true, "minLength": true, "maxLength": true,
}

// TestToolDefinitionsFitEveryClient checks every catalog tool against the
// limits above, so that no client drops, cuts or refuses one.
func TestToolDefinitionsFitEveryClient(t *testing.T) {
	for _, tool := range catalog(t) {
		tl := tool.Tool
		t.Run(tl.Name, func(t *testing.T) {
			require.LessOrEqual(t, len(clientPrefix+tl.Name), maxPrefixedName, "the prefixed name is too long for the model APIs")
			require.LessOrEqual(t, len(tl.Description), maxDescription, "Claude Code would cut the description")
			// The wire form: a tool may carry a raw schema instead.
			raw, err := json.Marshal(tl)
			require.NoError(t, err)
			var wire map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(raw, &wire))
			for _, kind := range []string{"inputSchema", "outputSchema"} {
				if _, ok := wire[kind]; !ok && kind == "outputSchema" {
					continue
				}
				var v map[string]any
				require.NoError(t, json.Unmarshal(wire[kind], &v), "%s", wire[kind])
				require.Equal(t, "object", v["type"], "%s: the root must be an object", kind)
				require.Empty(t, unportable(v, ""), "%s keywords some client drops or refuses", kind)
			}
		})
	}
}

// unportable lists the schema keywords outside portableKeywords, with
// their paths; the names under properties are property names, not
// keywords.
func unportable(schema map[string]any, path string) []string {
	var out []string
	for k, v := range schema {
		if !portableKeywords[k] {
			out = append(out, fmt.Sprintf("%s/%s", path, k))
			continue
		}
		switch k {
		case "properties":
			props, _ := v.(map[string]any)
			for name, p := range props {
				if pm, ok := p.(map[string]any); ok {
					out = append(out, unportable(pm, path+"/properties/"+name)...)
				}
			}
		case "items", "additionalProperties":
			if m, ok := v.(map[string]any); ok {
				out = append(out, unportable(m, path+"/"+k)...)
			}
		}
	}
	sort.Strings(out)
	return out
}
