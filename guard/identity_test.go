package guard

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/capability"
)

func caps(t *testing.T, s ...string) []capability.Capability {
	t.Helper()
	c, err := capability.ParseList(s)
	require.NoError(t, err)
	return c
}

// TestIdentityLayersOnlyNarrow: identities rules add denials, allowlists,
// capability revokes, stricter approval modes and lower limits for the
// callers they match, and never let through what the base policy refuses.
func TestIdentityLayersOnlyNarrow(t *testing.T) {
	v := newTestValidator(t, "read_file", "write_file", "graph_write", "edit_ask")
	base := policyOf(t, []string{"read_*", "write_*", "edit_*"}, nil, []string{"fs:read:**", "fs:write:**"}, nil)
	layers := []IdentityLayer{
		{Name: "readers", Match: IdentityMatch{Scopes: []string{"mcp:read"}}, Allow: []string{"read_*"}},
		{Name: "bob", Match: IdentityMatch{Subjects: []string{"bob"}}, Deny: []string{"write_*"},
			Revoke: caps(t, "fs:read:secret/**"), Approval: map[string]ApprovalMode{"read_*": ApprovalElicit},
			Limits: LayerLimits{MaxCalls: 2}},
		{Name: "ci", Match: IdentityMatch{Identities: []string{"ci"}}, Allow: []string{"graph_*"}},
		{Name: "src-only", Match: IdentityMatch{ClientIDs: []string{"src-bot"}}, Grant: caps(t, "fs:read:src/**")},
		{Name: "nobody", Allow: []string{"none"}}, // matches no one: sets no field
		{Name: "strict", Match: IdentityMatch{Groups: []string{"contractors"}, ClientIDs: []string{"ide"}},
			Approval: map[string]ApprovalMode{"*": ApprovalDeny}},
	}
	alice := Claims{Subject: "alice", Scopes: []string{"mcp:tools"}}
	reader := Claims{Subject: "carol", Scopes: []string{"mcp:tools", "mcp:read"}}
	bob := Claims{Subject: "bob"}
	contractorIDE := Claims{Subject: "dan", ClientID: "ide", Groups: []string{"contractors"}}
	contractorCLI := Claims{Subject: "erin", ClientID: "cli", Groups: []string{"contractors"}}
	tests := []struct {
		name     string
		identity string
		claims   Claims
		calls    int
		tool     string
		args     string
		outcome  Outcome
		rule     string
	}{
		{"no rule applies", "oauth:alice@i", alice, 0, "write_file", `{"path":"a"}`, Allow, "allowed"},
		{"scope rule allowlists reads", "oauth:carol@i", reader, 0, "read_file", `{"path":"a"}`, Allow, "allowed"},
		{"scope rule refuses writes", "oauth:carol@i", reader, 0, "write_file", `{"path":"a"}`, Deny, "identities[readers].allow:not_allowlisted"},
		{"subject rule denies", "oauth:bob@i", bob, 0, "write_file", `{"path":"a"}`, Deny, `identities[bob].deny:"write_*"`},
		{"subject rule revokes a capability", "oauth:bob@i", bob, 0, "read_file", `{"path":"secret/k"}`, Deny, `capabilities.deny:"fs:read:secret/**"`},
		{"subject rule makes approval stricter", "oauth:bob@i", bob, 0, "read_file", `{"path":"a"}`, NeedsApproval, "approval.elicit"},
		{"subject rule lowers a limit", "oauth:bob@i", bob, 2, "read_file", `{"path":"a"}`, Deny, "limits.max_calls_per_session"},
		{"the base limit still holds for others", "oauth:alice@i", alice, 2, "read_file", `{"path":"a"}`, Allow, "allowed"},
		{"a rule cannot widen the base allowlist", "ci", Claims{}, 0, "graph_write", `{}`, Deny, `default:not_allowlisted`},
		{"static identity rule narrows", "ci", Claims{}, 0, "read_file", `{"path":"a"}`, Deny, "identities[ci].allow:not_allowlisted"},
		{"a rule's grant narrows the base's", "oauth:bot@i", Claims{Subject: "bot", ClientID: "src-bot"}, 0, "read_file", `{"path":"README.md"}`, Deny, "identities[src-only].grant"},
		{"within the rule's grant", "oauth:bot@i", Claims{Subject: "bot", ClientID: "src-bot"}, 0, "read_file", `{"path":"src/a.go"}`, Allow, "allowed"},
		{"a rule's grant covers only what it lists", "oauth:bot@i", Claims{Subject: "bot", ClientID: "src-bot"}, 0, "write_file", `{"path":"src/a.go"}`, Deny, "identities[src-only].grant"},
		{"every field must match", "oauth:erin@i", contractorCLI, 0, "read_file", `{"path":"a"}`, Allow, "allowed"},
		{"approval deny in a rule", "oauth:dan@i", contractorIDE, 0, "read_file", `{"path":"a"}`, Deny, `identities[strict].approval:"*"=deny`},
		{"a layer cannot lift the base's elicit", "oauth:alice@i", alice, 0, "edit_ask", `{"path":"a"}`, NeedsApproval, "approval.elicit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := *depthTools[tt.tool]
			if tool.Name == "" {
				tool = ToolInfo{Name: tt.tool}
			}
			call := Call{Tool: tt.tool, Identity: tt.identity, Claims: tt.claims, Args: decodeJSON(t, tt.args)}
			call.layers = layersOf(layers, call)
			d := Decide(call, &tool, base, Limits{MaxCalls: 10, MaxOutputBytes: 100}, State{Calls: tt.calls}, v)
			requireSameUntraced(t, d, decide(call, &tool, base, Limits{MaxCalls: 10, MaxOutputBytes: 100}, State{Calls: tt.calls}, v, false))
			require.Equal(t, tt.outcome, d.Outcome, "%s; trace %+v", d, d.Trace)
			require.Equal(t, tt.rule, d.Rule)
		})
	}
}

// TestARuleGrantCannotWiden: a rule granting more than the base does not
// let a need through that the base does not grant.
func TestARuleGrantCannotWiden(t *testing.T) {
	v := newTestValidator(t, "read_file")
	base := policyOf(t, []string{"*"}, nil, []string{"fs:read:src/**"}, nil)
	call := Call{Tool: "read_file", Identity: "ci", Args: decodeJSON(t, `{"path":"README.md"}`)}
	call.layers = layersOf([]IdentityLayer{{Name: "wide", Match: IdentityMatch{Identities: []string{"ci"}}, Grant: caps(t, "fs:read:**")}}, call)
	tool := *depthTools["read_file"]
	d := Decide(call, &tool, base, Limits{MaxCalls: 10, MaxOutputBytes: 100}, State{}, v)
	require.Equal(t, "capabilities.missing", d.Rule)
}

func TestAdvertisedToFollowsTheRules(t *testing.T) {
	c := &clock{}
	g, _ := limitedGuard(t, Limits{}, c)
	g.cfg.Identities = []IdentityLayer{{Name: "readers", Match: IdentityMatch{Subjects: []string{"carol"}}, Allow: []string{"read_*"}}}
	require.True(t, g.AdvertisedTo("oauth:alice@i", Claims{Subject: "alice"}, "graph_write"))
	require.False(t, g.AdvertisedTo("oauth:carol@i", Claims{Subject: "carol"}, "graph_write"))
	require.True(t, g.AdvertisedTo("oauth:carol@i", Claims{Subject: "carol"}, "read_file"))
	d := g.Explain(Call{Tool: "graph_write", Identity: "oauth:carol@i", Claims: Claims{Subject: "carol"}, Args: map[string]any{}})
	require.Equal(t, "identities[readers].allow:not_allowlisted", d.Rule)
	require.Equal(t, "identity", d.Trace[len(d.Trace)-1].Check)
}
