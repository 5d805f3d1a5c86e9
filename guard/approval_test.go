package guard

import (
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

func TestResolveApproval(t *testing.T) {
	tests := []struct {
		name     string
		tool     string
		requires bool
		rules    map[string]ApprovalMode
		want     ApprovalMode
		wantRule string
	}{
		{name: "requires approval, no rule", tool: "write_file", requires: true, want: ApprovalElicit, wantRule: "approval.default"},
		{name: "no approval needed, no rule", tool: "read_file", want: ApprovalAllow, wantRule: "approval.default"},
		{name: "operator trusts it", tool: "write_file", requires: true, rules: map[string]ApprovalMode{"write_file": ApprovalAllow},
			want: ApprovalAllow, wantRule: `approval.modes:"write_file"=allow`},
		{name: "glob deny", tool: "run_command", requires: true, rules: map[string]ApprovalMode{"run_*": ApprovalDeny},
			want: ApprovalDeny, wantRule: `approval.modes:"run_*"=deny`},
		{name: "a read can be made to ask", tool: "read_file", rules: map[string]ApprovalMode{"read_*": ApprovalElicit},
			want: ApprovalElicit, wantRule: `approval.modes:"read_*"=elicit`},
		{name: "a read can be denied", tool: "read_file", rules: map[string]ApprovalMode{"*": ApprovalDeny},
			want: ApprovalDeny, wantRule: `approval.modes:"*"=deny`},
		{name: "deny beats allow", tool: "write_file", requires: true,
			rules: map[string]ApprovalMode{"*": ApprovalAllow, "write_*": ApprovalDeny},
			want:  ApprovalDeny, wantRule: `approval.modes:"write_*"=deny`},
		{name: "elicit beats allow, whichever glob is narrower", tool: "write_file", requires: true,
			rules: map[string]ApprovalMode{"write_file": ApprovalAllow, "*_file": ApprovalElicit},
			want:  ApprovalElicit, wantRule: `approval.modes:"*_file"=elicit`},
		{name: "deny beats elicit", tool: "edit_file", requires: true,
			rules: map[string]ApprovalMode{"{edit,write}_file": ApprovalElicit, "edit_*": ApprovalDeny},
			want:  ApprovalDeny, wantRule: `approval.modes:"edit_*"=deny`},
		{name: "equal modes name the smallest glob", tool: "write_file", requires: true,
			rules: map[string]ApprovalMode{"write_*": ApprovalAllow, "*": ApprovalAllow},
			want:  ApprovalAllow, wantRule: `approval.modes:"*"=allow`},
		{name: "non-matching rules leave the default", tool: "write_file", requires: true,
			rules: map[string]ApprovalMode{"read_*": ApprovalAllow, "run_*": ApprovalDeny},
			want:  ApprovalElicit, wantRule: "approval.default"},
		{name: "a glob never matches a prefix only", tool: "write_file_now", requires: true,
			rules: map[string]ApprovalMode{"write_file": ApprovalAllow}, want: ApprovalElicit, wantRule: "approval.default"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, rule := ResolveApproval(tc.tool, tc.requires, tc.rules)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.wantRule, rule)
		})
	}
}

func TestParseApprovalMode(t *testing.T) {
	for _, s := range []string{"allow", "elicit", "deny"} {
		m, err := ParseApprovalMode(s)
		require.NoError(t, err)
		require.Equal(t, ApprovalMode(s), m)
	}
	for _, s := range []string{"", "ALLOW", "ask", "yes"} {
		_, err := ParseApprovalMode(s)
		require.Error(t, err, s)
	}
}

func TestDecideApproval(t *testing.T) {
	v := newTestValidator(t, "write_file", "read_file")
	policy, err := NewPolicy([]string{"*"}, nil)
	require.NoError(t, err)
	limits := Limits{MaxCalls: 10, MaxOutputBytes: 1000}
	ok := decodeJSON(t, `{"path":"a.txt"}`)
	tests := []struct {
		name     string
		tool     ToolInfo
		call     Call
		want     Outcome
		wantRule string
		wantCode toolerr.Code
	}{
		{name: "elicit asks", tool: ToolInfo{Name: "write_file", Approval: ApprovalElicit},
			call: Call{Tool: "write_file", Args: ok}, want: NeedsApproval, wantRule: "approval.elicit"},
		{name: "unresolved mode falls back to requires_approval", tool: ToolInfo{Name: "write_file", RequiresApproval: true},
			call: Call{Tool: "write_file", Args: ok}, want: NeedsApproval, wantRule: "approval.elicit"},
		{name: "allow runs", tool: ToolInfo{Name: "write_file", RequiresApproval: true, Approval: ApprovalAllow},
			call: Call{Tool: "write_file", Args: ok}, want: Allow, wantRule: "allowed"},
		{name: "deny refuses", tool: ToolInfo{Name: "write_file", Approval: ApprovalDeny},
			call: Call{Tool: "write_file", Args: ok}, want: Deny, wantRule: "approval.deny", wantCode: toolerr.DeniedNotAllowed},
		{name: "trusted call skips elicit", tool: ToolInfo{Name: "write_file", Approval: ApprovalElicit},
			call: Call{Tool: "write_file", Args: ok, Trusted: true}, want: Allow, wantRule: "allowed"},
		{name: "trusted call skips deny", tool: ToolInfo{Name: "write_file", Approval: ApprovalDeny},
			call: Call{Tool: "write_file", Args: ok, Trusted: true}, want: Allow, wantRule: "allowed"},
		{name: "arguments are checked before asking", tool: ToolInfo{Name: "write_file", Approval: ApprovalElicit, PathArgs: []string{"path"}},
			call: Call{Tool: "write_file", Args: decodeJSON(t, `{"path":"../x"}`)}, want: Deny, wantCode: toolerr.PathOutsideWorkspace},
		{name: "limits are checked before asking", tool: ToolInfo{Name: "write_file", Approval: ApprovalElicit},
			call: Call{Tool: "write_file", Args: ok, Session: "full"}, want: Deny, wantRule: "limits.max_calls_per_session", wantCode: toolerr.LimitExceeded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			state := State{}
			if tc.call.Session == "full" {
				state.Calls = limits.MaxCalls
			}
			d := Decide(tc.call, &tc.tool, policy, limits, state, v)
			require.Equal(t, tc.want, d.Outcome, d.String())
			if tc.wantRule != "" {
				require.Equal(t, tc.wantRule, d.Rule)
			}
			if tc.wantCode != "" {
				require.Equal(t, tc.wantCode, d.Err.Code)
				require.NotEmpty(t, d.Err.Hint)
			}
		})
	}
}

func newApprovalGuard(t *testing.T, audit Auditor) *Guard {
	policy, err := NewPolicy([]string{"*"}, nil)
	require.NoError(t, err)
	tools := []ToolInfo{
		{Name: "write_file", RequiresApproval: true, PathArgs: []string{"path"}},
		{Name: "read_file", PathArgs: []string{"path"}},
	}
	g := New(Config{Policy: policy, Limits: Limits{MaxCalls: 2, MaxOutputBytes: 1 << 20}, MaxOutputBytes: 1 << 20},
		tools, newTestValidator(t, "write_file", "read_file"), audit)
	require.NoError(t, g.ApplyApprovalModes(map[string]string{"read_*": "deny"}))
	return g
}

func TestApplyApprovalModes(t *testing.T) {
	g := newApprovalGuard(t, audit.Discard{})
	mode, rule, ok := g.ApprovalOf("write_file")
	require.True(t, ok)
	require.Equal(t, ApprovalElicit, mode)
	require.Equal(t, "approval.default", rule)
	mode, rule, _ = g.ApprovalOf("read_file")
	require.Equal(t, ApprovalDeny, mode)
	require.Equal(t, `approval.modes:"read_*"=deny`, rule)
	_, _, ok = g.ApprovalOf("nope")
	require.False(t, ok)
	require.ErrorContains(t, g.ApplyApprovalModes(map[string]string{"x": "maybe"}), `approval.modes "x"`)
	require.ErrorContains(t, g.ApplyApprovalModes(map[string]string{"[": "deny"}), "invalid tool-name glob")
}

func TestAdmitPendingApproval(t *testing.T) {
	audit := &memAuditor{}
	g := newApprovalGuard(t, audit)
	require.False(t, g.Allowed("read_file"), "a tool in deny mode is not advertised")
	require.True(t, g.Allowed("write_file"))

	call := Call{Tool: "write_file", Session: "s", Args: decodeJSON(t, `{"path":"a.txt"}`)}
	ticket, denial := g.Admit(call)
	require.Nil(t, denial)
	require.True(t, ticket.NeedsApproval())
	require.Equal(t, ArgsDigest(call.Args), ticket.Digest())
	require.Nil(t, ticket.Approve("approval.elicit"))
	require.False(t, ticket.NeedsApproval())
	ticket.Finish(mcp.NewToolResultText("ok"), nil)

	declined, denial := g.Admit(call)
	require.Nil(t, denial)
	e := declined.Decline(toolerr.New(toolerr.DeniedApprovalDeclined, "h", "no").WithRule("approval.declined"))
	require.Equal(t, toolerr.DeniedApprovalDeclined, e.Code)

	// Both calls counted when admitted, the declined one too: the session
	// (limit 2) has no call left.
	_, denial = g.Admit(call)
	require.NotNil(t, denial)
	require.Equal(t, toolerr.LimitExceeded, denial.Code)

	var trail []string
	for _, e := range audit.all() {
		trail = append(trail, string(e.Outcome)+":"+e.Rule+":"+e.Code)
		require.Equal(t, ArgsDigest(call.Args), e.ArgsSHA256)
	}
	require.Equal(t, []string{
		"needs_approval:approval.elicit:", "approved:approval.elicit:", "completed:allowed:",
		"needs_approval:approval.elicit:", "declined:approval.declined:denied.approval_declined",
		"denied:limits.max_calls_per_session:limit.exceeded",
	}, trail)
}

func TestApprovalFailsClosedWhenAuditFails(t *testing.T) {
	call := Call{Tool: "write_file", Session: "s", Args: decodeJSON(t, `{"path":"a.txt"}`)}

	_, denial := newApprovalGuard(t, &failingAuditor{okFor: 0}).Admit(call)
	require.NotNil(t, denial, "a pending call whose audit line fails is refused")
	require.Equal(t, "audit.write", denial.Rule)

	ticket, denial := newApprovalGuard(t, &failingAuditor{okFor: 1}).Admit(call)
	require.Nil(t, denial)
	e := ticket.Approve("approval.elicit")
	require.NotNil(t, e, "an approval whose audit line fails does not let the call run")
	require.Equal(t, toolerr.AuditWrite, e.Code)
	require.True(t, ticket.NeedsApproval())
}

// TestAdmitAnswerIsNotChargedAgain: the retry that brings the answer of a
// call charged when it asked passes the limits that call used, is not
// charged again, and still passes every other check.
func TestAdmitAnswerIsNotChargedAgain(t *testing.T) {
	g := newApprovalGuard(t, &memAuditor{})
	call := Call{Tool: "write_file", Session: "s", Args: decodeJSON(t, `{"path":"a.txt"}`), ArgBytes: 16}
	asked, denial := g.Admit(call)
	require.Nil(t, denial)
	require.True(t, asked.NeedsApproval())
	asked2, denial := g.Admit(call)
	require.Nil(t, denial)
	require.True(t, asked2.NeedsApproval(), "the session (limit 2) is now used up")

	retry, denial := g.AdmitAnswer(call)
	require.Nil(t, denial, "the answer was paid for when the call asked")
	require.True(t, retry.NeedsApproval(), "the answer still has to be settled")
	d := g.Explain(call)
	require.Equal(t, "limits.max_calls_per_session", d.Rule, "and it was not charged a third time, nor freed one")
	require.Equal(t, 2, g.usage.(*memStore).sessions["s"].Calls)

	_, denial = g.AdmitAnswer(Call{Tool: "read_file", Session: "s", Args: decodeJSON(t, `{"path":"a.txt"}`)})
	require.NotNil(t, denial, "the other checks still apply")
	require.Equal(t, "approval.deny", denial.Rule)
}
