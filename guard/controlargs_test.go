package guard

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// ownFlagSchema is a tool that takes wait_for_previous itself.
const ownFlagSchema = `{"type":"object","properties":{"path":{"type":"string"},"wait_for_previous":{"type":"string"}},"additionalProperties":false}`

func newControlValidator(t *testing.T) *Validator {
	t.Helper()
	v, err := NewValidator(map[string]json.RawMessage{
		"read_file": fileSchema(t),
		"own_flag":  json.RawMessage(ownFlagSchema),
	}, map[string][]string{"read_file": {"path"}})
	require.NoError(t, err)
	return v.WithControlArgs([]string{"wait_for_previous"})
}

func TestDropControlArgs(t *testing.T) {
	v := newControlValidator(t)
	tests := []struct {
		name, tool, args string
		wantArgs         string
		wantDropped      []string
		wantRule         string // "" when the call is valid after dropping
	}{
		{name: "Gemini CLI's recorded call", tool: "read_file", args: `{"path":"hello.txt","wait_for_previous":true}`,
			wantArgs: `{"path":"hello.txt"}`, wantDropped: []string{"wait_for_previous"}},
		{name: "false and null are dropped too", tool: "read_file", args: `{"path":"a","wait_for_previous":null}`,
			wantArgs: `{"path":"a"}`, wantDropped: []string{"wait_for_previous"}},
		{name: "a call without it is untouched", tool: "read_file", args: `{"path":"a"}`, wantArgs: `{"path":"a"}`},
		{name: "a tool whose schema defines it keeps it", tool: "own_flag", args: `{"path":"a","wait_for_previous":"x"}`,
			wantArgs: `{"path":"a","wait_for_previous":"x"}`},
		{name: "and its schema still checks it", tool: "own_flag", args: `{"path":"a","wait_for_previous":true}`,
			wantArgs: `{"path":"a","wait_for_previous":true}`, wantRule: "args.schema"},
		{name: "other unknown keys are still refused", tool: "read_file", args: `{"path":"a","wait_for_previous":true,"wait":true}`,
			wantArgs: `{"path":"a","wait":true}`, wantDropped: []string{"wait_for_previous"}, wantRule: "args.schema"},
		{name: "a differently cased name is not dropped", tool: "read_file", args: `{"path":"a","Wait_For_Previous":true}`,
			wantArgs: `{"path":"a","Wait_For_Previous":true}`, wantRule: "args.schema"},
		{name: "nested keys are not touched", tool: "read_file", args: `{"path":"a","paths":[{"wait_for_previous":true}]}`,
			wantArgs: `{"path":"a","paths":[{"wait_for_previous":true}]}`, wantRule: "args.schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := decodeJSON(t, tt.args)
			got, dropped := v.DropControlArgs(tt.tool, args)
			require.Equal(t, tt.wantDropped, dropped)
			require.JSONEq(t, tt.wantArgs, mustMarshal(t, got))
			require.JSONEq(t, tt.args, mustMarshal(t, args), "the call's own arguments are not changed")
			err := v.Validate(tt.tool, got)
			if tt.wantRule == "" {
				require.Nil(t, err)
			} else {
				require.NotNil(t, err)
				require.Equal(t, tt.wantRule, err.Rule)
			}
		})
	}
}

func TestDropControlArgsOffByDefault(t *testing.T) {
	v, err := NewValidator(map[string]json.RawMessage{"read_file": fileSchema(t)}, nil)
	require.NoError(t, err)
	args := decodeJSON(t, `{"path":"a","wait_for_previous":true}`)
	got, dropped := v.DropControlArgs("read_file", args)
	require.Empty(t, dropped, "an empty list drops nothing")
	require.Equal(t, "args.schema", v.Validate("read_file", got).Rule)
}

// TestDroppedArgsAudited: the audit line names what was dropped, and its
// digest is of the arguments the tool received.
func TestDroppedArgsAudited(t *testing.T) {
	audit := &memAuditor{}
	g := New(Config{Policy: Policy{Allow: []string{"read_file"}}, Limits: roomyLimits, MaxOutputBytes: 1 << 20},
		[]ToolInfo{{Name: "read_file"}}, newControlValidator(t), audit)
	raw := json.RawMessage(`{"path":"hello.txt","wait_for_previous":true}`)
	call, out := g.DropControlArgs(Call{Tool: "read_file", Args: decodeJSON(t, string(raw))}, raw)
	require.JSONEq(t, `{"path":"hello.txt"}`, string(out), "the handler decodes the arguments without it")
	d := g.Explain(call)
	require.Equal(t, Allow, d.Outcome, "%v", d)
	require.Contains(t, d.Trace[len(d.Trace)-2].Detail, "dropped client control arguments wait_for_previous")
	ticket, denial := g.Admit(call)
	require.Nil(t, denial)
	ticket.Finish(nil, nil)
	entries := audit.all()
	require.Len(t, entries, 2)
	for _, e := range entries {
		require.Equal(t, []string{"wait_for_previous"}, e.DroppedArgs)
		require.Equal(t, ArgsDigest(decodeJSON(t, `{"path":"hello.txt"}`)), e.ArgsSHA256)
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
