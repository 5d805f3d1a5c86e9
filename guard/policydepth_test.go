package guard

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// depthTools declare capabilities the way the real tools do.
var depthTools = map[string]*ToolInfo{
	"read_file":      {Name: "read_file", PathArgs: []string{"path", "paths"}, Capabilities: []string{"fs:read:{path}"}},
	"read_many":      {Name: "read_many", PathArgs: []string{"path", "paths"}, Capabilities: []string{"fs:read:{path}", "fs:read:{paths}"}},
	"directory_tree": {Name: "directory_tree", PathArgs: []string{"path", "paths"}, Capabilities: []string{"fs:read:{path}/**"}},
	"write_file":     {Name: "write_file", PathArgs: []string{"path", "paths"}, Capabilities: []string{"fs:write:{path}"}},
	"config_get":     {Name: "config_get", RequiresTrust: true, PathArgs: []string{"path", "paths"}, Capabilities: []string{"env:read:HOME"}},
	"graph_write":    {Name: "graph_write", PathArgs: []string{"path", "paths"}, Capabilities: []string{"graph:write:*"}, Cost: 3},
	"edit_ask":       {Name: "edit_ask", PathArgs: []string{"path", "paths"}, Capabilities: []string{"fs:write:{path}"}, Approval: ApprovalElicit},
	"edit_never":     {Name: "edit_never", PathArgs: []string{"path", "paths"}, Capabilities: []string{"fs:write:{path}"}, Approval: ApprovalDeny},
}

// TestDecidePolicyMatrix runs calls against policies that differ in tool
// globs, trust, capability grants and denials, and limits at their edge.
func TestDecidePolicyMatrix(t *testing.T) {
	v := newTestValidator(t, "read_file", "read_many", "directory_tree", "write_file", "config_get", "graph_write", "edit_ask", "edit_never")
	open := policyOf(t, []string{"*"}, nil, []string{"fs:read:**", "fs:write:**", "env:read:HOME", "graph:write:*"}, nil)
	srcOnly := policyOf(t, []string{"*"}, nil, []string{"fs:read:src/**", "fs:write:src/gen/**"}, nil)
	noSecrets := policyOf(t, []string{"*"}, []string{"write_*"}, []string{"fs:read:**"}, []string{"fs:read:secrets/**", "fs:read:**/*.pem"})
	base := Limits{MaxCalls: 10, MaxOutputBytes: 1000}
	withLimits := Limits{MaxCalls: 10, MaxOutputBytes: 1000, MaxBytesIn: 100, Budget: 10, RatePerMinute: 6,
		Tools: []ToolLimits{{Glob: "graph_*", MaxCalls: 2, Cost: 4}, {Glob: "read_*", MaxBytesOut: 500, RatePerMinute: 60}}}
	full := State{Tokens: 6, Tools: map[string]ToolState{"read_*": {Tokens: 60}}}

	tests := []struct {
		name      string
		policy    Policy
		limits    Limits
		state     State
		tool      string
		args      string
		trusted   bool
		outcome   Outcome
		rule      string
		code      toolerr.Code
		missing   string
		lastCheck string
	}{
		{"open read", open, base, State{}, "read_file", `{"path":"a.txt"}`, false, Allow, "allowed", "", "", "approval"},
		{"tool glob denies before capabilities", noSecrets, base, State{}, "write_file", `{"path":"a"}`, false, Deny, `deny:"write_*"`, toolerr.DeniedNotAllowed, "", "policy"},
		{"trust before capabilities", srcOnly, base, State{}, "config_get", `{"path":"a"}`, false, Deny, "trust.required", toolerr.DeniedNotAllowed, "", "trust"},
		{"trusted but capability missing", srcOnly, base, State{}, "config_get", `{"path":"a"}`, true, Deny, "capabilities.missing", toolerr.DeniedCapability, "env:read:HOME", "capabilities"},
		{"trusted and granted", open, base, State{}, "config_get", `{"path":"a"}`, true, Allow, "allowed", "", "", "approval"},
		{"path inside the grant", srcOnly, base, State{}, "read_file", `{"path":"src/a/b.go"}`, false, Allow, "allowed", "", "", "approval"},
		{"path outside the grant", srcOnly, base, State{}, "read_file", `{"path":"README.md"}`, false, Deny, "capabilities.missing", toolerr.DeniedCapability, "fs:read:README.md", "capabilities"},
		{"dot-dot back into the grant is cleaned", srcOnly, base, State{}, "read_file", `{"path":"docs/../src/x.go"}`, false, Allow, "allowed", "", "", "approval"},
		{"dot-dot out of the grant", srcOnly, base, State{}, "read_file", `{"path":"src/../secrets/k"}`, false, Deny, "capabilities.missing", toolerr.DeniedCapability, "fs:read:secrets/k", "capabilities"},
		{"dot-dot out of the workspace", open, base, State{}, "read_file", `{"path":"../x"}`, false, Deny, "path.inside_workspace", toolerr.PathOutsideWorkspace, "", "capabilities"},
		{"one path of a list outside", srcOnly, base, State{}, "read_many", `{"path":"src/a","paths":["src/b","etc/c"]}`, false, Deny, "capabilities.missing", toolerr.DeniedCapability, "fs:read:etc/c", "capabilities"},
		{"absent path is the root", srcOnly, base, State{}, "directory_tree", `{}`, false, Deny, "capabilities.missing", toolerr.DeniedCapability, "fs:read:**", "capabilities"},
		{"tree inside the grant", srcOnly, base, State{}, "directory_tree", `{"path":"src/pkg"}`, false, Allow, "allowed", "", "", "approval"},
		{"capabilities before arguments", srcOnly, base, State{}, "read_file", `{"path":"etc/x","bogus":1}`, false, Deny, "capabilities.missing", toolerr.DeniedCapability, "fs:read:etc/x", "capabilities"},
		{"write outside the write grant", srcOnly, base, State{}, "write_file", `{"path":"src/a.go"}`, false, Deny, "capabilities.missing", toolerr.DeniedCapability, "fs:write:src/a.go", "capabilities"},
		{"write inside the write grant", srcOnly, base, State{}, "write_file", `{"path":"src/gen/a.go"}`, false, Allow, "allowed", "", "", "approval"},
		{"elicit mode waits for a human", srcOnly, base, State{}, "edit_ask", `{"path":"src/gen/a.go"}`, false, NeedsApproval, "approval.elicit", "", "", "approval"},
		{"elicit mode: the operator is not asked", srcOnly, base, State{}, "edit_ask", `{"path":"src/gen/a.go"}`, true, Allow, "allowed", "", "", "approval"},
		{"elicit mode after a missing capability is denied first", srcOnly, base, State{}, "edit_ask", `{"path":"docs/a.md"}`, false, Deny, "capabilities.missing", toolerr.DeniedCapability, "fs:write:docs/a.md", "capabilities"},
		{"deny mode", srcOnly, base, State{}, "edit_never", `{"path":"src/gen/a.go"}`, false, Deny, "approval.deny", toolerr.DeniedNotAllowed, "", "approval"},
		{"deny beats grant", noSecrets, base, State{}, "read_file", `{"path":"secrets/db"}`, false, Deny, `capabilities.deny:"fs:read:secrets/**"`, toolerr.DeniedCapability, "fs:read:secrets/db", "capabilities"},
		{"deny by extension", noSecrets, base, State{}, "read_file", `{"path":"a/b/key.pem"}`, false, Deny, `capabilities.deny:"fs:read:**/*.pem"`, toolerr.DeniedCapability, "fs:read:a/b/key.pem", "capabilities"},
		{"tree over a denied subtree", noSecrets, base, State{}, "directory_tree", `{"path":"."}`, false, Deny, `capabilities.deny:"fs:read:secrets/**"`, toolerr.DeniedCapability, "fs:read:**", "capabilities"},
		{"no grants at all", policyOf(t, []string{"*"}, nil, nil, nil), base, State{}, "read_file", `{"path":"a"}`, false, Deny, "capabilities.missing", toolerr.DeniedCapability, "fs:read:a", "capabilities"},
		{"capabilities before limits", srcOnly, base, State{Calls: 10}, "read_file", `{"path":"x"}`, false, Deny, "capabilities.missing", toolerr.DeniedCapability, "fs:read:x", "capabilities"},
		// Limits at their edge.
		{"within every limit", open, withLimits, full, "read_file", `{"path":"a"}`, false, Allow, "allowed", "", "", "approval"},
		{"bytes in at the limit", open, withLimits, withState(full, func(s *State) { s.BytesIn = 100 - 12 }), "read_file", `{"path":"a"}`, false, Allow, "allowed", "", "", "approval"},
		{"bytes in over the limit", open, withLimits, withState(full, func(s *State) { s.BytesIn = 100 - 11 }), "read_file", `{"path":"a"}`, false, Deny, "limits.max_bytes_in_per_session", toolerr.LimitExceeded, "limits.max_bytes_in_per_session", "limits"},
		{"rate: one token left", open, withLimits, withState(full, func(s *State) { s.Tokens = 1 }), "read_file", `{"path":"a"}`, false, Allow, "allowed", "", "", "approval"},
		{"rate: bucket empty", open, withLimits, withState(full, func(s *State) { s.Tokens = 0.99 }), "read_file", `{"path":"a"}`, false, Deny, "limits.rate_per_minute", toolerr.RateLimited, "limits.rate_per_minute", "limits"},
		{"tool rate: bucket empty", open, withLimits, withState(full, func(s *State) { s.Tools = map[string]ToolState{"read_*": {Tokens: 0.5}} }), "read_file", `{"path":"a"}`, false, Deny, "limits.tools.read_*.rate_per_minute", toolerr.RateLimited, "limits.tools.read_*.rate_per_minute", "limits"},
		{"tool bytes out at the limit", open, withLimits, withState(full, func(s *State) { s.Tools = map[string]ToolState{"read_*": {Tokens: 60, BytesOut: 500}} }), "read_file", `{"path":"a"}`, false, Deny, "limits.tools.read_*.max_bytes_out", toolerr.LimitExceeded, "limits.tools.read_*.max_bytes_out", "limits"},
		{"budget: cost fits exactly", open, withLimits, withState(full, func(s *State) { s.Spent = 6 }), "graph_write", `{"path":"a"}`, false, Allow, "allowed", "", "", "approval"},
		{"budget: one over", open, withLimits, withState(full, func(s *State) { s.Spent = 7 }), "graph_write", `{"path":"a"}`, false, Deny, "limits.budget", toolerr.BudgetExceeded, "limits.budget", "limits"},
		{"tool max calls reached", open, withLimits, withState(full, func(s *State) { s.Tools = map[string]ToolState{"graph_*": {Calls: 2}} }), "graph_write", `{"path":"a"}`, false, Deny, "limits.tools.graph_*.max_calls", toolerr.LimitExceeded, "limits.tools.graph_*.max_calls", "limits"},
		{"session max calls reached", open, withLimits, withState(full, func(s *State) { s.Calls = 10 }), "read_file", `{"path":"a"}`, false, Deny, "limits.max_calls_per_session", toolerr.LimitExceeded, "limits.max_calls_per_session", "limits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := Call{Tool: tt.tool, Session: "s", Trusted: tt.trusted, Args: decodeJSON(t, tt.args), ArgBytes: int64(len(tt.args))}
			d := Decide(call, depthTools[tt.tool], tt.policy, tt.limits, tt.state, v)
			requireSameUntraced(t, d, decide(call, depthTools[tt.tool], tt.policy, tt.limits, tt.state, v, false))
			require.Equal(t, tt.outcome, d.Outcome, "%s; trace %+v", d, d.Trace)
			require.Equal(t, tt.rule, d.Rule)
			require.Equal(t, tt.missing, d.Missing)
			require.Equal(t, tt.lastCheck, d.Trace[len(d.Trace)-1].Check, "the trace ends at the deciding check")
			for _, s := range d.Trace[:len(d.Trace)-1] {
				require.Equal(t, Allow, s.Outcome, "every check before the last passed")
			}
			if tt.outcome != Deny {
				require.Nil(t, d.Err)
				return
			}
			require.Equal(t, tt.code, d.Err.Code, d.Err.Message)
			require.Equal(t, tt.rule, d.Err.Rule)
			require.NotEmpty(t, d.Err.Hint)
			if tt.missing != "" && tt.code == toolerr.DeniedCapability {
				require.Contains(t, d.Err.Message, tt.missing, "the denial names the capability")
			}
		})
	}
}

func TestDecideTraceNamesEveryCheckInOrder(t *testing.T) {
	v := newTestValidator(t, "read_file")
	d := Decide(Call{Tool: "read_file", Args: decodeJSON(t, `{"path":"src/a.go"}`)}, depthTools["read_file"],
		policyOf(t, []string{"read_*"}, nil, []string{"fs:read:src/**"}, nil), Limits{MaxCalls: 1, MaxOutputBytes: 1}, State{}, v)
	require.Equal(t, Allow, d.Outcome)
	var got []string
	for _, s := range d.Trace {
		got = append(got, s.Check+"="+s.Rule)
	}
	require.Equal(t, []string{"tool=tool.known", `policy=allow:"read_*"`, "trust=trust.not_required",
		"capabilities=capabilities.granted", "limits=limits.within", "arguments=args.valid", "approval=approval.not_required"}, got)
	require.Equal(t, "needs fs:read:src/a.go", d.Trace[3].Detail)
}

func policyOf(t testing.TB, allow, deny, grant, revoke []string) Policy {
	t.Helper()
	p, err := NewPolicy(allow, deny)
	require.NoError(t, err)
	p, err = p.WithCapabilities(grant, revoke)
	require.NoError(t, err)
	return p
}

func withState(s State, f func(*State)) State {
	f(&s)
	return s
}
