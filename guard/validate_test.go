package guard

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// TestSchemaCompiledAtFirstCall: a validator compiles no schema when it
// is built, the first call of a tool compiles that tool's only, and the
// first call still refuses arguments its schema does not allow.
func TestSchemaCompiledAtFirstCall(t *testing.T) {
	v := newTestValidator(t, "read_file", "list_dir", "search")
	require.Zero(t, v.Compiled(), "no schema is compiled before a call")

	err := v.Validate("read_file", decodeJSON(t, `{"path":"a.txt","mode":"x"}`))
	require.NotNil(t, err, "the first call validates against the schema")
	require.Equal(t, toolerr.InvalidSchema, err.Code)
	require.Equal(t, "args.schema", err.Rule)
	require.Contains(t, err.Message, "mode")
	require.EqualValues(t, 1, v.Compiled(), "only read_file's schema is compiled")

	require.Nil(t, v.Validate("read_file", decodeJSON(t, `{"path":"a.txt"}`)))
	err = v.Validate("read_file", decodeJSON(t, `{"path":7}`))
	require.NotNil(t, err)
	require.Equal(t, toolerr.InvalidSchema, err.Code)
	require.EqualValues(t, 1, v.Compiled(), "a schema is compiled once")
}

// TestSchemaCompiledOnceUnderConcurrentFirstCalls: calls racing to be a
// tool's first compile its schema once, and each is validated.
func TestSchemaCompiledOnceUnderConcurrentFirstCalls(t *testing.T) {
	v := newTestValidator(t, "read_file")
	var wg sync.WaitGroup
	errs := make([]*toolerr.Error, 16)
	for i := range errs {
		wg.Go(func() {
			args := `{"path":"a.txt"}`
			if i%2 == 1 {
				args = `{"path":"a.txt","extra":1}`
			}
			errs[i] = v.Validate("read_file", decodeJSON(t, args))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if i%2 == 0 {
			require.Nil(t, err, "call %d", i)
		} else {
			require.NotNil(t, err, "call %d", i)
			require.Equal(t, toolerr.InvalidSchema, err.Code, "call %d", i)
		}
	}
	require.EqualValues(t, 1, v.Compiled())
}

// hostileSchemas do not compile: the guard must refuse them, never
// validate calls against less than they say.
var hostileSchemas = map[string]string{
	"bad pattern":     `{"type":"object","properties":{"q":{"type":"string","pattern":"(unclosed"}}}`,
	"unknown $ref":    `{"type":"object","properties":{"q":{"$ref":"https://attacker.example/s.json"}}}`,
	"not JSON":        `{"type":"object",`,
	"wrong type kind": `{"type":"objekt"}`,
}

// TestCompileRefusesHostileSchemas: Compile reports a schema that does
// not compile, naming the tool; called lazily instead, the call is
// refused as internal (fail closed), not let through.
func TestCompileRefusesHostileSchemas(t *testing.T) {
	for name, raw := range hostileSchemas {
		t.Run(name, func(t *testing.T) {
			v, err := NewValidator(map[string]json.RawMessage{"evil": json.RawMessage(raw), "read_file": fileSchema(t)}, nil)
			require.NoError(t, err)
			err = v.Compile("read_file", "evil", "no_such_tool")
			require.Error(t, err)
			require.Contains(t, err.Error(), "tool evil: input schema")

			lazy, err := NewValidator(map[string]json.RawMessage{"evil": json.RawMessage(raw)}, nil)
			require.NoError(t, err)
			terr := lazy.Validate("evil", decodeJSON(t, `{"q":"x"}`))
			require.NotNil(t, terr, "a call against a schema that does not compile is refused")
			require.Equal(t, toolerr.Internal, terr.Code)
			require.Equal(t, "args.schema", terr.Rule)
			require.Contains(t, terr.Message, "tool evil: input schema")
		})
	}
}

// TestControlArgsReadLazySchema: the names a tool's schema defines are
// read at first need too, and a control argument it defines is kept.
func TestControlArgsReadLazySchema(t *testing.T) {
	v := newTestValidator(t, "read_file").WithControlArgs([]string{"path", "wait_for_previous"})
	args, dropped := v.DropControlArgs("read_file", map[string]any{"path": "a", "wait_for_previous": true})
	require.Equal(t, []string{"wait_for_previous"}, dropped)
	require.Equal(t, map[string]any{"path": "a"}, args)
	require.Zero(t, v.Compiled(), "reading the property names compiles nothing")
}
