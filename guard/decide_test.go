package guard

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// decideTools are the tools the decision tables know.
var decideTools = map[string]*ToolInfo{
	"read_file":           {Name: "read_file", PathArgs: []string{"path", "paths"}},
	"read_multiple_files": {Name: "read_multiple_files", PathArgs: []string{"path", "paths"}},
	"write_file":          {Name: "write_file", RequiresApproval: true, PathArgs: []string{"path", "paths"}},
	"config_get":          {Name: "config_get", RequiresTrust: true, PathArgs: []string{"path", "paths"}},
	"a":                   {Name: "a", PathArgs: []string{"path", "paths"}},
	"b":                   {Name: "b", PathArgs: []string{"path", "paths"}},
	"c":                   {Name: "c", PathArgs: []string{"path", "paths"}},
}

func TestDecide(t *testing.T) {
	v := newTestValidator(t, "read_file", "read_multiple_files", "write_file", "config_get", "a", "b", "c")
	readOnly := []string{"read_file"}
	limits := Limits{MaxCalls: 10, MaxOutputBytes: 1000}
	const okArgs = `{"path":"src/main.go"}`

	tests := []struct {
		name        string
		tool        string
		unknownTool bool
		allow, deny []string
		args        string // JSON; "" means no arguments sent
		trusted     bool
		state       State
		wantOutcome Outcome
		wantRule    string
		wantCode    toolerr.Code
		wantMsg     string // substring of the error message
	}{
		// 1. Known and allowlisted.
		{name: "unknown tool", tool: "rm_rf", unknownTool: true, allow: []string{"*"}, args: okArgs,
			wantOutcome: Deny, wantRule: "tool.known", wantCode: toolerr.DeniedNotAllowed, wantMsg: `"rm_rf" does not exist`},
		{name: "allowed", tool: "read_file", allow: readOnly, args: okArgs,
			wantOutcome: Allow, wantRule: "allowed"},
		{name: "not allowlisted", tool: "write_file", allow: readOnly, args: okArgs,
			wantOutcome: Deny, wantRule: "default:not_allowlisted", wantCode: toolerr.DeniedNotAllowed, wantMsg: "default:not_allowlisted"},
		{name: "deny beats allow", tool: "write_file", allow: []string{"*"}, deny: []string{"write_*"}, args: okArgs,
			wantOutcome: Deny, wantRule: `deny:"write_*"`, wantCode: toolerr.DeniedNotAllowed},
		{name: "allow star without matching deny", tool: "read_file", allow: []string{"*"}, deny: []string{"write_*"}, args: okArgs,
			wantOutcome: Allow, wantRule: "allowed"},
		{name: "glob read_*", tool: "read_multiple_files", allow: []string{"read_*"}, args: okArgs,
			wantOutcome: Allow, wantRule: "allowed"},
		{name: "glob read_* rejects write", tool: "write_file", allow: []string{"read_*"}, args: okArgs,
			wantOutcome: Deny, wantRule: "default:not_allowlisted", wantCode: toolerr.DeniedNotAllowed},
		{name: "brace glob a", tool: "a", allow: []string{"{a,b}"}, args: okArgs, wantOutcome: Allow, wantRule: "allowed"},
		{name: "brace glob b", tool: "b", allow: []string{"{a,b}"}, args: okArgs, wantOutcome: Allow, wantRule: "allowed"},
		{name: "brace glob c", tool: "c", allow: []string{"{a,b}"}, args: okArgs,
			wantOutcome: Deny, wantRule: "default:not_allowlisted", wantCode: toolerr.DeniedNotAllowed},
		{name: "policy is checked before arguments", tool: "write_file", allow: readOnly, args: `{"path":"../x","bogus":1}`,
			wantOutcome: Deny, wantRule: "default:not_allowlisted", wantCode: toolerr.DeniedNotAllowed},

		// 2. Trust.
		{name: "requires_trust denied for a model call", tool: "config_get", allow: []string{"*"}, args: okArgs,
			wantOutcome: Deny, wantRule: "trust.required", wantCode: toolerr.DeniedNotAllowed, wantMsg: "trusted context"},
		{name: "requires_trust allowed when trusted", tool: "config_get", allow: []string{"*"}, args: okArgs, trusted: true,
			wantOutcome: Allow, wantRule: "allowed"},
		{name: "trust does not override deny", tool: "config_get", allow: []string{"*"}, deny: []string{"config_*"}, args: okArgs, trusted: true,
			wantOutcome: Deny, wantRule: `deny:"config_*"`, wantCode: toolerr.DeniedNotAllowed},
		{name: "trust does not override the allowlist", tool: "config_get", allow: readOnly, args: okArgs, trusted: true,
			wantOutcome: Deny, wantRule: "default:not_allowlisted", wantCode: toolerr.DeniedNotAllowed},

		// 4. Limits.
		{name: "last call under the limit", tool: "read_file", allow: readOnly, args: okArgs, state: State{Calls: 9},
			wantOutcome: Allow, wantRule: "allowed"},
		{name: "max calls reached", tool: "read_file", allow: readOnly, args: okArgs, state: State{Calls: 10},
			wantOutcome: Deny, wantRule: "limits.max_calls_per_session", wantCode: toolerr.LimitExceeded, wantMsg: "the limit is 10"},
		{name: "max calls exceeded", tool: "read_file", allow: readOnly, args: okArgs, state: State{Calls: 11},
			wantOutcome: Deny, wantRule: "limits.max_calls_per_session", wantCode: toolerr.LimitExceeded},
		{name: "output bytes nearly exhausted", tool: "read_file", allow: readOnly, args: okArgs, state: State{OutputBytes: 999},
			wantOutcome: Allow, wantRule: "allowed"},
		{name: "output bytes exhausted", tool: "read_file", allow: readOnly, args: okArgs, state: State{OutputBytes: 1000},
			wantOutcome: Deny, wantRule: "limits.max_output_bytes_per_session", wantCode: toolerr.LimitExceeded},
		{name: "limits are checked before arguments", tool: "read_file", allow: readOnly, args: `{"bogus":1}`, state: State{Calls: 10},
			wantOutcome: Deny, wantRule: "limits.max_calls_per_session", wantCode: toolerr.LimitExceeded},

		// 5. Arguments: schema.
		{name: "unknown field", tool: "read_file", allow: readOnly, args: `{"path":"a.txt","recursive":true}`,
			wantOutcome: Deny, wantRule: "args.schema", wantCode: toolerr.InvalidSchema, wantMsg: "recursive"},
		{name: "wrong type string for integer", tool: "read_file", allow: readOnly, args: `{"path":"a.txt","count":"3"}`,
			wantOutcome: Deny, wantRule: "args.schema", wantCode: toolerr.InvalidSchema, wantMsg: "/count"},
		{name: "wrong type fraction for integer", tool: "read_file", allow: readOnly, args: `{"path":"a.txt","count":1.5}`,
			wantOutcome: Deny, wantRule: "args.schema", wantCode: toolerr.InvalidSchema, wantMsg: "/count"},
		{name: "wrong type number for path", tool: "read_file", allow: readOnly, args: `{"path":5}`,
			wantOutcome: Deny, wantRule: "args.schema", wantCode: toolerr.InvalidSchema, wantMsg: "/path"},
		{name: "wrong type object for paths", tool: "read_file", allow: readOnly, args: `{"path":"a","paths":{"0":"x"}}`,
			wantOutcome: Deny, wantRule: "args.schema", wantCode: toolerr.InvalidSchema, wantMsg: "/paths"},
		{name: "wrong element type in paths", tool: "read_file", allow: readOnly, args: `{"path":"a","paths":["x",7]}`,
			wantOutcome: Deny, wantRule: "args.schema", wantCode: toolerr.InvalidSchema, wantMsg: "/paths/1"},
		{name: "missing required", tool: "read_file", allow: readOnly, args: `{"count":1}`,
			wantOutcome: Deny, wantRule: "args.schema", wantCode: toolerr.InvalidSchema, wantMsg: "path"},
		{name: "no arguments at all count as an empty object", tool: "read_file", allow: readOnly, args: "",
			wantOutcome: Deny, wantRule: "args.schema", wantCode: toolerr.InvalidSchema, wantMsg: "path"},
		{name: "arguments not an object", tool: "read_file", allow: readOnly, args: `["a.txt"]`,
			wantOutcome: Deny, wantRule: "args.schema", wantCode: toolerr.InvalidSchema},
		{name: "integer given as exact big number", tool: "read_file", allow: readOnly, args: `{"path":"a","count":123456789012345678901234567890}`,
			wantOutcome: Allow, wantRule: "allowed"},
		{name: "optional fields present", tool: "read_file", allow: readOnly, args: `{"path":"a","count":2,"paths":["b","c/d"]}`,
			wantOutcome: Allow, wantRule: "allowed"},
		{name: "null list", tool: "read_file", allow: readOnly, args: `{"path":"a","paths":null}`,
			wantOutcome: Allow, wantRule: "allowed"},

		// 5. Arguments: paths.
		{name: "path climbs out", tool: "read_file", allow: readOnly, args: `{"path":"../x"}`,
			wantOutcome: Deny, wantRule: "path.inside_workspace", wantCode: toolerr.PathOutsideWorkspace, wantMsg: `argument "path"`},
		{name: "path climbs out after a detour", tool: "read_file", allow: readOnly, args: `{"path":"a/../../x"}`,
			wantOutcome: Deny, wantRule: "path.inside_workspace", wantCode: toolerr.PathOutsideWorkspace},
		{name: "absolute path", tool: "read_file", allow: readOnly, args: `{"path":"/etc/passwd"}`,
			wantOutcome: Deny, wantRule: "path.relative", wantCode: toolerr.PathOutsideWorkspace},
		{name: "backslash", tool: "read_file", allow: readOnly, args: `{"path":"a\\b"}`,
			wantOutcome: Deny, wantRule: "path.no_backslash", wantCode: toolerr.PathInvalid},
		{name: "NUL byte", tool: "read_file", allow: readOnly, args: `{"path":"a\u0000b"}`,
			wantOutcome: Deny, wantRule: "path.no_control_chars", wantCode: toolerr.PathInvalid},
		{name: "drive letter", tool: "read_file", allow: readOnly, args: `{"path":"C:/Windows"}`,
			wantOutcome: Deny, wantRule: "path.no_drive_letter", wantCode: toolerr.PathInvalid},
		{name: "empty path", tool: "read_file", allow: readOnly, args: `{"path":""}`,
			wantOutcome: Deny, wantRule: "path.non_empty", wantCode: toolerr.PathInvalid},
		{name: "bidi override", tool: "read_file", allow: readOnly, args: `{"path":"a\u202eb"}`,
			wantOutcome: Deny, wantRule: "path.no_control_chars", wantCode: toolerr.PathInvalid},
		{name: "list with one bad element", tool: "read_file", allow: readOnly, args: `{"path":"ok.txt","paths":["src/a.go","../../etc/shadow","b.go"]}`,
			wantOutcome: Deny, wantRule: "path.inside_workspace", wantCode: toolerr.PathOutsideWorkspace, wantMsg: `argument "paths"`},
		{name: "list with an absolute element last", tool: "read_file", allow: readOnly, args: `{"path":"ok.txt","paths":["a","/root/.ssh/id_rsa"]}`,
			wantOutcome: Deny, wantRule: "path.relative", wantCode: toolerr.PathOutsideWorkspace},
		{name: "list with an empty element", tool: "read_file", allow: readOnly, args: `{"path":"ok.txt","paths":["a",""]}`,
			wantOutcome: Deny, wantRule: "path.non_empty", wantCode: toolerr.PathInvalid},
		{name: "dot is the root", tool: "read_file", allow: readOnly, args: `{"path":"."}`,
			wantOutcome: Allow, wantRule: "allowed"},
		{name: "inner dotdot that stays inside", tool: "read_file", allow: readOnly, args: `{"path":"a/b/../c"}`,
			wantOutcome: Allow, wantRule: "allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			policy, err := NewPolicy(tt.allow, tt.deny)
			require.NoError(t, err)
			var info *ToolInfo
			if !tt.unknownTool {
				info = decideTools[tt.tool]
				require.NotNil(t, info, "test tool %q", tt.tool)
			}
			call := Call{Tool: tt.tool, Session: "s1", Trusted: tt.trusted}
			if tt.args != "" {
				call.Args = decodeJSON(t, tt.args)
			}

			d := Decide(call, info, policy, limits, tt.state, v)
			requireSameUntraced(t, d, decide(call, info, policy, limits, tt.state, v, false))

			require.Equal(t, tt.wantOutcome, d.Outcome, "decision: %s", d)
			require.Equal(t, tt.wantRule, d.Rule)
			if tt.wantOutcome == Allow {
				require.Nil(t, d.Err)
				return
			}
			require.NotNil(t, d.Err)
			require.Equal(t, tt.wantCode, d.Err.Code, "error: %v", d.Err)
			require.Equal(t, tt.wantRule, d.Err.Rule, "the error must name the same rule as the decision")
			require.NotEmpty(t, d.Err.Hint, "every denial tells the model what to do instead")
			if tt.wantMsg != "" {
				require.Contains(t, d.Err.Message, tt.wantMsg)
			}
		})
	}
}

func TestDecideToolWithoutSchemaFailsClosed(t *testing.T) {
	v := newTestValidator(t, "read_file")
	policy, err := NewPolicy([]string{"*"}, nil)
	require.NoError(t, err)
	info := &ToolInfo{Name: "orphan"}
	d := Decide(Call{Tool: "orphan", Args: decodeJSON(t, `{}`)}, info, policy, Limits{MaxCalls: 1, MaxOutputBytes: 1}, State{}, v)
	require.Equal(t, Deny, d.Outcome)
	require.Equal(t, toolerr.Internal, d.Err.Code)
	require.Equal(t, "args.schema", d.Rule)
}

func TestDecideSchemaErrorNamesEveryProblemBriefly(t *testing.T) {
	v := newTestValidator(t, "read_file")
	policy, err := NewPolicy([]string{"read_file"}, nil)
	require.NoError(t, err)
	// Ten unknown fields and a wrong type: the message stays one line and is capped.
	var b strings.Builder
	b.WriteString(`{"path":1`)
	for _, f := range []string{"f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9"} {
		b.WriteString(`,"` + f + `":true`)
	}
	b.WriteString(`}`)
	d := Decide(Call{Tool: "read_file", Args: decodeJSON(t, b.String())}, decideTools["read_file"], policy,
		Limits{MaxCalls: 1, MaxOutputBytes: 1}, State{}, v)
	require.Equal(t, toolerr.InvalidSchema, d.Err.Code)
	require.NotContains(t, d.Err.Message, "\n")
}

func TestDecisionString(t *testing.T) {
	require.Equal(t, "allowed (allowed)", Decision{Outcome: Allow, Rule: "allowed"}.String())
	d := deny("trust.required", toolerr.New(toolerr.DeniedNotAllowed, "", "no"))
	require.Equal(t, "denied (trust.required): no", d.String())
}

func TestValidateRejectsCostlyShapes(t *testing.T) {
	v := newTestValidator(t, "read_file")
	deep := strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40)
	cases := map[string]string{
		"huge exponent":  `{"path":"a","count":1e999999}`,
		"long number":    `{"path":"a","count":1` + strings.Repeat("0", 60) + `}`,
		"deep nesting":   `{"path":"a","extra":` + deep + `}`,
		"deep in a list": `{"paths":[` + deep + `]}`,
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			err := v.Validate("read_file", decodeJSON(t, args))
			require.NotNil(t, err)
			require.Equal(t, toolerr.InvalidSchema, err.Code)
			require.Contains(t, []string{"args.number", "args.depth"}, err.Rule)
		})
	}
}

// requireSameUntraced checks that the guard's own decision (no trace,
// as Admit makes it) is the traced one without its trace: the trace
// changes what is reported, never what is decided.
func requireSameUntraced(t *testing.T, traced, untraced Decision) {
	t.Helper()
	require.Nil(t, untraced.Trace)
	traced.Trace, traced.note, untraced.note = nil, "", ""
	require.Equal(t, traced, untraced)
}
