package guard

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
)

// flatTestSchemas are flat schemas of the shapes the tools have, and
// schemas that are not flat.
var flatTestSchemas = map[string]string{
	"file": `{"type":"object","properties":{"path":{"type":"string"},"count":{"type":"integer"},"paths":{"type":["null","array"],"items":{"type":"string"}}},"required":["path"],"additionalProperties":false}`,
	"enum": `{"type":"object","properties":{"mode":{"type":"string","enum":["a","b"],"description":"d"},"n":{"type":["null","integer"]},"ok":{"type":"boolean"},"ns":{"type":"array","items":{"type":"integer"}}},"additionalProperties":false}`,
	"none": `{"type":"object","properties":{},"additionalProperties":false}`,
}

var notFlatSchemas = []string{
	`{"type":"object","properties":{"p":{"type":"string","minLength":1}},"additionalProperties":false}`,
	`{"type":"object","properties":{"p":{"type":"string"}}}`,
	`{"type":"object","properties":{"p":{"type":"string"}},"additionalProperties":true}`,
	`{"type":"object","properties":{"p":{"type":"number"}},"additionalProperties":false}`,
	`{"type":"object","properties":{"p":{"type":"array"}},"additionalProperties":false}`,
	`{"type":"object","properties":{"p":{"type":"array","items":{"type":"string","pattern":"x"}}},"additionalProperties":false}`,
	`{"type":"object","properties":{"p":{"type":"integer","enum":[1]}},"additionalProperties":false}`,
	`{"type":"object","properties":{"p":{"$ref":"#/x"}},"additionalProperties":false}`,
	`{"type":["object"],"properties":{},"additionalProperties":false}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","additionalProperties":false}`,
}

func compileSchema(t testing.TB, raw string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(raw))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("toolwarden:///t.json", doc))
	s, err := c.Compile("toolwarden:///t.json")
	require.NoError(t, err)
	return s
}

func TestFlatSchemaOf(t *testing.T) {
	require.NotNil(t, flatSchemaOf(fileSchema(t)), "the schema mcp-go generates for the test tools is flat")
	for name, raw := range flatTestSchemas {
		require.NotNil(t, flatSchemaOf(json.RawMessage(raw)), name)
	}
	for _, raw := range notFlatSchemas {
		require.Nil(t, flatSchemaOf(json.RawMessage(raw)), raw)
	}
}

func TestFlatSchemaAccepts(t *testing.T) {
	file := flatSchemaOf(json.RawMessage(flatTestSchemas["file"]))
	enum := flatSchemaOf(json.RawMessage(flatTestSchemas["enum"]))
	for _, tt := range []struct {
		s    *flatSchema
		args string
		want bool
	}{
		{file, `{"path":"a"}`, true},
		{file, `{"path":"a","count":12,"paths":["x","y"]}`, true},
		{file, `{"path":"a","paths":null}`, true},
		{file, `{"path":"a","count":1.0}`, false}, // the validator decides
		{file, `{"path":"a","count":"1"}`, false},
		{file, `{"count":1}`, false},
		{file, `{"path":"a","other":1}`, false},
		{file, `{"path":"a","paths":["x",1]}`, false},
		{file, `{"path":null}`, false},
		{enum, `{"mode":"a","n":null,"ok":false,"ns":[1,-2]}`, true},
		{enum, `{"mode":"c"}`, false},
		{enum, `{"n":"1"}`, false},
	} {
		require.Equal(t, tt.want, tt.s.accepts(decodeJSON(t, tt.args)), tt.args)
	}
}

// FuzzFlatSchema: whatever a flat schema accepts, the validator accepts.
func FuzzFlatSchema(f *testing.F) {
	for _, seed := range []string{`{"path":"a","count":3,"paths":["b"]}`, `{"mode":"b","n":-4,"ok":true,"ns":[]}`, `{}`, `{"path":"a","count":-0}`} {
		f.Add(seed)
	}
	type pair struct {
		flat   *flatSchema
		schema *jsonschema.Schema
	}
	var pairs []pair
	for _, raw := range flatTestSchemas {
		pairs = append(pairs, pair{flatSchemaOf(json.RawMessage(raw)), compileSchema(f, raw)})
	}
	f.Fuzz(func(t *testing.T, data string) {
		dec := json.NewDecoder(bytes.NewReader([]byte(data)))
		dec.UseNumber()
		var args any
		if dec.Decode(&args) != nil {
			return
		}
		for _, p := range pairs {
			if p.flat.accepts(args) {
				if err := p.schema.Validate(args); err != nil {
					t.Fatalf("flat schema accepts %s, the validator refuses it: %v", data, err)
				}
			}
		}
	})
}
