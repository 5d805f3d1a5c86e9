package bridge_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/bridge"
	fake "github.com/toolwarden/toolwarden/internal/llmfake/gemini"
)

func TestAdaptSchema(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		dropped        []string
		err            string
	}{
		{name: "empty", in: ``, want: `{"properties":{},"type":"object"}`},
		{name: "kept as is",
			in:   `{"type":"object","properties":{"path":{"type":"string","description":"d"},"n":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`,
			want: `{"additionalProperties":false,"properties":{"n":{"minimum":1,"type":"integer"},"path":{"description":"d","type":"string"}},"required":["path"],"type":"object"}`},
		{name: "no type gets object", in: `{"properties":{}}`, want: `{"properties":{},"type":"object"}`},
		{name: "annotations and constraints dropped",
			in:      `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"s":{"type":"string","maxLength":10,"pattern":"^a","default":"a","examples":["a"]}}}`,
			want:    `{"properties":{"s":{"type":"string"}},"type":"object"}`,
			dropped: []string{"$schema", "default", "examples", "maxLength", "pattern"}},
		{name: "const becomes enum", in: `{"type":"object","properties":{"k":{"const":"fixed"}}}`,
			want: `{"properties":{"k":{"enum":["fixed"]}},"type":"object"}`},
		{name: "nested items and anyOf",
			in:      `{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"x":{"anyOf":[{"type":"string","format":"uuid","minLength":36},{"type":"null"}]}}}}}}`,
			want:    `{"properties":{"l":{"items":{"properties":{"x":{"anyOf":[{"format":"uuid","type":"string"},{"type":"null"}]}},"type":"object"},"type":"array"}},"type":"object"}`,
			dropped: []string{"minLength"}},
		{name: "refs and defs kept",
			in:   `{"type":"object","$defs":{"id":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/id"}}}`,
			want: `{"$defs":{"id":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/id"}},"type":"object"}`},
		{name: "array root", in: `{"type":"array"}`, err: "needs an object"},
		{name: "allOf", in: `{"type":"object","properties":{"a":{"allOf":[{"type":"string"}]}}}`, err: `"allOf"`},
		{name: "not", in: `{"type":"object","not":{"required":["a"]}}`, err: `"not"`},
		{name: "if", in: `{"type":"object","if":{},"then":{}}`, err: "Gemini does not support"},
		{name: "patternProperties", in: `{"type":"object","patternProperties":{"^x":{}}}`, err: "patternProperties"},
		{name: "boolean enum", in: `{"type":"object","properties":{"b":{"enum":[true,false]}}}`, err: "enum value"},
		{name: "not json", in: `[`, err: "not a JSON object"},
		{name: "bad subschema", in: `{"type":"object","properties":{"a":3}}`, err: "not an object"},
		{name: "too deep", in: `{"type":"object","properties":{"a":` + strings.Repeat(`{"type":"array","items":`, 40) + `{}` + strings.Repeat(`}`, 40) + `}}`, err: "deeper"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, dropped, err := bridge.AdaptSchema(json.RawMessage(tc.in))
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			b, _ := json.Marshal(got)
			assert.JSONEq(t, tc.want, string(b))
			assert.Equal(t, tc.dropped, dropped)
		})
	}
}

// TestEveryToolwardenToolAdapts checks the real tool surface: no tool is
// lost to schema adaptation.
func TestEveryToolwardenToolAdapts(t *testing.T) {
	h := newHarness(t, setup{}, fake.Reply(fake.Text("ok")))
	for _, tool := range h.b.Tools() {
		raw := tool.RawInputSchema
		if len(raw) == 0 {
			raw, _ = json.Marshal(tool.InputSchema)
		}
		_, _, err := bridge.AdaptSchema(raw)
		assert.NoError(t, err, tool.Name)
	}
}

func TestUnadaptableToolIsSkippedWithWarning(t *testing.T) {
	s := server.NewMCPServer("schemas", "1")
	s.AddTool(mcp.NewToolWithRawSchema("fine", "a fine tool", json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)), nil)
	// (mcp-go's client keeps only type, properties, required,
	// additionalProperties and $defs at a schema's root, so the
	// unadaptable keyword sits in a property.)
	s.AddTool(mcp.NewToolWithRawSchema("weird", "uses allOf", json.RawMessage(`{"type":"object","properties":{"a":{"allOf":[{"type":"string"}]}}}`)), nil)
	h := newHarness(t, setup{srv: s}, fake.Reply(fake.Text("ok")))
	_, err := h.b.Ask(context.Background(), "hi")
	require.NoError(t, err)
	decls := declarations(t, h.fake.Requests()[0])
	assert.Contains(t, decls, "fine")
	assert.NotContains(t, decls, "weird")
	assert.Contains(t, h.log.String(), "tool left out")
	assert.Contains(t, h.log.String(), "tool=weird")
}

// TestToolWithANameGeminiRejectsIsSkipped: Gemini refuses a whole request
// whose declarations hold a name it does not accept (it must start with a
// letter or "_", then letters, digits, "_", ".", ":" or "-", at most 128),
// so such a tool is left out with a warning rather than break every turn.
func TestToolWithANameGeminiRejectsIsSkipped(t *testing.T) {
	s := server.NewMCPServer("names", "1")
	for _, name := range []string{"fine.tool-1:x", "9lives", "has space", "evil\x1b[2J", strings.Repeat("a", 129)} {
		s.AddTool(mcp.NewTool(name), nil)
	}
	h := newHarness(t, setup{srv: s}, fake.Reply(fake.Text("ok")))
	_, err := h.b.Ask(context.Background(), "hi")
	require.NoError(t, err)
	decls := declarations(t, h.fake.Requests()[0])
	assert.Len(t, decls, 1)
	assert.Contains(t, decls, "fine.tool-1:x")
	assert.Equal(t, 4, strings.Count(h.log.String(), "tool left out: Gemini does not accept its name"))
	assert.NotContains(t, h.log.String(), "\x1b")
}
