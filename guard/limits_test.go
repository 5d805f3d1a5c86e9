package guard

import (
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// clock is a settable time for the rate limits.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func limitedGuard(t *testing.T, l Limits, c *clock) (*Guard, *memAuditor) {
	t.Helper()
	if l.MaxCalls == 0 {
		l.MaxCalls, l.MaxOutputBytes = 1000, 1<<20
	}
	audit := &memAuditor{}
	g := New(Config{Policy: policyOf(t, []string{"*"}, nil, []string{"fs:read:**", "graph:write:*"}, nil), Limits: l,
		MaxOutputBytes: 1 << 20, Now: c.now},
		[]ToolInfo{*depthTools["read_file"], *depthTools["graph_write"]}, newTestValidator(t, "read_file", "graph_write"), audit)
	return g, audit
}

func admit(g *Guard, identity, tool string) *toolerr.Error {
	args := map[string]any{"path": "a"}
	tk, err := g.Admit(Call{Tool: tool, Session: "s-" + identity, Identity: identity, Args: args, ArgBytes: 12})
	if err == nil {
		tk.Finish(mcp.NewToolResultText("0123456789"), nil)
	}
	return err
}

func TestRateLimitRefillsWithTheClock(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	g, _ := limitedGuard(t, Limits{RatePerMinute: 6, Burst: 2}, c)
	require.Nil(t, admit(g, "alice", "read_file"))
	require.Nil(t, admit(g, "alice", "read_file"), "the burst allows two at once")
	err := admit(g, "alice", "read_file")
	require.NotNil(t, err)
	require.Equal(t, toolerr.RateLimited, err.Code)
	require.Equal(t, "limits.rate_per_minute", err.Rule)
	require.Contains(t, err.Hint, "Wait about 10 seconds")
	require.Equal(t, 10, err.RetryAfter)
	require.Nil(t, admit(g, "bob", "read_file"), "another identity has its own bucket")
	c.advance(9 * time.Second)
	require.NotNil(t, admit(g, "alice", "read_file"), "one token takes 10 s at 6/min")
	c.advance(time.Second)
	require.Nil(t, admit(g, "alice", "read_file"))
	require.NotNil(t, admit(g, "alice", "read_file"))
}

func TestPerToolRateAndCalls(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	g, _ := limitedGuard(t, Limits{Tools: []ToolLimits{{Glob: "graph_*", RatePerMinute: 60, Burst: 1, MaxCalls: 3}}}, c)
	require.Nil(t, admit(g, "alice", "graph_write"))
	err := admit(g, "alice", "graph_write")
	require.Equal(t, "limits.tools.graph_*.rate_per_minute", err.Rule)
	require.Nil(t, admit(g, "alice", "read_file"), "other tools are not limited by it")
	for range 2 {
		c.advance(time.Second)
		require.Nil(t, admit(g, "alice", "graph_write"))
	}
	c.advance(time.Minute)
	err = admit(g, "alice", "graph_write")
	require.Equal(t, "limits.tools.graph_*.max_calls", err.Rule)
	require.Equal(t, toolerr.LimitExceeded, err.Code)
}

func TestBudgetSpendsCostPerCall(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	// graph_write costs 3 itself, raised to 4 by its limits entry; read_file costs nothing.
	g, audit := limitedGuard(t, Limits{Budget: 10, Tools: []ToolLimits{{Glob: "graph_*", Cost: 4}}}, c)
	require.Nil(t, admit(g, "alice", "graph_write"))
	require.Nil(t, admit(g, "alice", "graph_write"))
	err := admit(g, "alice", "graph_write")
	require.NotNil(t, err, "8 spent, 4 more would pass 10")
	require.Equal(t, toolerr.BudgetExceeded, err.Code)
	require.Equal(t, "limits.budget", err.Rule)
	require.Nil(t, admit(g, "alice", "read_file"), "a free call still fits")
	require.Nil(t, admit(g, "carol", "graph_write"), "budgets are per identity")
	last := audit.all()[len(audit.all())-2]
	require.Equal(t, "carol", last.Identity)
}

func TestBytesInAndOutPerToolAndSession(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	g, _ := limitedGuard(t, Limits{MaxBytesIn: 36, Tools: []ToolLimits{{Glob: "read_file", MaxBytesOut: 20}}}, c)
	require.Nil(t, admit(g, "alice", "read_file"))
	require.Nil(t, admit(g, "alice", "read_file"), "20 bytes out is reached only after this one")
	err := admit(g, "alice", "read_file")
	require.Equal(t, "limits.tools.read_file.max_bytes_out", err.Rule)
	require.Nil(t, admit(g, "alice", "graph_write"), "36 bytes in: the third call's 12 bytes fit exactly")
	err = admit(g, "alice", "graph_write")
	require.Equal(t, "limits.max_bytes_in_per_session", err.Rule)
}

func TestLimitsFollowTheIdentityNotTheSession(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	g, _ := limitedGuard(t, Limits{MaxCalls: 2, MaxOutputBytes: 1 << 20}, c)
	call := func(session, identity string) *toolerr.Error {
		tk, err := g.Admit(Call{Tool: "read_file", Session: session, Identity: identity, Args: map[string]any{"path": "a"}})
		if err == nil {
			tk.Finish(mcp.NewToolResultText("x"), nil)
		}
		return err
	}
	require.Nil(t, call("s1", "alice"))
	g.EndSession("s1")
	require.Nil(t, call("s2", "alice"), "a new session of the same identity")
	require.Equal(t, "limits.max_calls_per_session", call("s3", "alice").Rule, "reconnecting does not reset the count")
	require.Nil(t, call("s3", "bob"))
}

func TestExplainCountsNothing(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	g, audit := limitedGuard(t, Limits{MaxCalls: 1, MaxOutputBytes: 1 << 20, RatePerMinute: 1, Burst: 1}, c)
	call := Call{Tool: "read_file", Identity: "alice", Args: map[string]any{"path": "a"}}
	for range 5 {
		require.Equal(t, Allow, g.Explain(call).Outcome)
	}
	require.Empty(t, audit.all(), "explain writes no audit line")
	require.Nil(t, admit(g, "alice", "read_file"))
	d := g.Explain(call)
	require.Equal(t, Deny, d.Outcome, "explain sees the usage so far")
	require.Equal(t, "limits.max_calls_per_session", d.Missing)
}

func TestTrustedCallsAreAuditedAsTrusted(t *testing.T) {
	audit := &memAuditor{}
	g := New(Config{Policy: policyOf(t, []string{"*"}, nil, []string{"env:read:HOME"}, nil), Limits: Limits{MaxCalls: 5, MaxOutputBytes: 100}, MaxOutputBytes: 100},
		[]ToolInfo{*depthTools["config_get"]}, newTestValidator(t, "config_get"), audit)
	_, err := g.Admit(Call{Tool: "config_get", Args: map[string]any{"path": "a"}})
	require.Equal(t, "trust.required", err.Rule)
	tk, err := g.Admit(Call{Tool: "config_get", Trusted: true, Args: map[string]any{"path": "a"}})
	require.Nil(t, err)
	tk.Finish(mcp.NewToolResultText("ok"), nil)
	entries := audit.all()
	require.False(t, entries[0].Trusted)
	require.True(t, entries[1].Trusted)
	require.True(t, entries[2].Trusted)
	require.True(t, g.Allowed("config_get"))
	require.False(t, g.Advertised("config_get"), "a requires_trust tool is never advertised to a model")
}

func TestRequireTrustGlobsMarkTools(t *testing.T) {
	g := New(Config{Policy: policyOf(t, []string{"*"}, nil, []string{"fs:read:**"}, nil), RequireTrust: []string{"read_*"},
		Limits: Limits{MaxCalls: 5, MaxOutputBytes: 100}, MaxOutputBytes: 100},
		[]ToolInfo{*depthTools["read_file"]}, newTestValidator(t, "read_file"), &memAuditor{})
	require.False(t, g.Advertised("read_file"))
	_, err := g.Admit(Call{Tool: "read_file", Args: map[string]any{"path": "a"}})
	require.Equal(t, "trust.required", err.Rule)
	tk, err := g.Admit(Call{Tool: "read_file", Trusted: true, Args: map[string]any{"path": "a"}})
	require.Nil(t, err)
	tk.Finish(mcp.NewToolResultText("ok"), nil)
	require.False(t, depthTools["read_file"].RequiresTrust, "the caller's tool list is not changed")
}

// TestCallTimeoutFor: limits.call_timeout does not cut a tool's own run
// timeout, while a limits.tools timeout, set for the tool, does.
func TestCallTimeoutFor(t *testing.T) {
	tools := []ToolInfo{{Name: "run_script"}, {Name: "read_file"}}
	cases := []struct {
		name      string
		perTool   time.Duration
		atLeast   time.Duration
		want      time.Duration
		wantRule  string
		toolLimit bool
	}{
		{"call_timeout", 0, 0, 30 * time.Second, "limits.call_timeout", false},
		{"run timeout above call_timeout", 0, 65 * time.Second, 65 * time.Second, "exec.limits.timeout", false},
		{"run timeout below call_timeout", 0, 10 * time.Second, 30 * time.Second, "limits.call_timeout", false},
		{"tool timeout cuts the run timeout", 20 * time.Second, 65 * time.Second, 20 * time.Second, "limits.tools.run_*.timeout", true},
		{"tool timeout above the run timeout", 90 * time.Second, 65 * time.Second, 65 * time.Second, "exec.limits.timeout", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := Limits{}
			if tc.toolLimit {
				l.Tools = []ToolLimits{{Glob: "run_*", Timeout: tc.perTool}}
			}
			g := New(Config{Policy: policyOf(t, []string{"*"}, nil, nil, nil), Limits: l, CallTimeout: 30 * time.Second}, tools, nil, nil)
			d, rule := g.CallTimeoutFor("run_script", tc.atLeast, "exec.limits.timeout")
			require.Equal(t, tc.want, d)
			require.Equal(t, tc.wantRule, rule)
		})
	}
}

// TestCountedLimitsStartAgainAfterTheWindow is the regression of the
// lockout found under load: with no session to end, an identity that
// reached max_calls_per_session stayed denied until the server restarted.
func TestCountedLimitsStartAgainAfterTheWindow(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	g, _ := limitedGuard(t, Limits{MaxCalls: 3, MaxOutputBytes: 1 << 20, Window: time.Minute,
		Tools: []ToolLimits{{Glob: "graph_*", MaxCalls: 1}}}, c)
	require.Nil(t, admit(g, "alice", "read_file"))
	c.advance(20 * time.Second)
	require.Nil(t, admit(g, "alice", "graph_write"))
	require.Equal(t, "limits.tools.graph_*.max_calls", admit(g, "alice", "graph_write").Rule)
	require.Nil(t, admit(g, "alice", "read_file"))
	err := admit(g, "alice", "read_file")
	require.NotNil(t, err)
	require.Equal(t, "limits.max_calls_per_session", err.Rule)
	require.Equal(t, toolerr.LimitExceeded, err.Code)
	require.Equal(t, 40, err.RetryAfter, "the window began at alice's first call")
	require.Contains(t, err.Hint, "Wait 40 seconds")
	require.Contains(t, err.JSON(), `"retry_after":40`)
	c.advance(39 * time.Second)
	require.Equal(t, 1, admit(g, "alice", "read_file").RetryAfter)
	c.advance(time.Second)
	require.Nil(t, admit(g, "alice", "read_file"), "a new window counts from zero")
	require.Nil(t, admit(g, "alice", "graph_write"), "per-tool counts start again too")
}

func TestDefaultWindowAndRateRetryAfter(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	g, _ := limitedGuard(t, Limits{MaxCalls: 1, MaxOutputBytes: 1 << 20}, c)
	require.Nil(t, admit(g, "alice", "read_file"))
	require.Equal(t, int(DefaultWindow/time.Second), admit(g, "alice", "read_file").RetryAfter)
	c.advance(DefaultWindow)
	require.Nil(t, admit(g, "alice", "read_file"))

	g, _ = limitedGuard(t, Limits{RatePerMinute: 6, Burst: 1}, c)
	require.Nil(t, admit(g, "alice", "read_file"))
	require.Equal(t, 10, admit(g, "alice", "read_file").RetryAfter)
}

// TestIdleUsagesAreForgotten: a team server sees many identities; the
// counters of one whose window ended and whose rate bucket is full again
// are dropped (a fresh one would decide the same), so memory follows the
// identities active within a window.
func TestIdleUsagesAreForgotten(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	g, _ := limitedGuard(t, Limits{MaxCalls: 5, MaxOutputBytes: 1 << 20, Window: time.Minute, RatePerMinute: 1, Burst: 1}, c)
	require.Nil(t, admit(g, "alice", "read_file"))
	c.advance(30 * time.Second)
	require.Nil(t, admit(g, "bob", "read_file"))
	c.advance(35 * time.Second)
	require.Nil(t, admit(g, "carol", "read_file"))
	m := g.usage.(*memStore)
	m.mu.Lock()
	_, alice := m.sessions["alice"]
	_, bob := m.sessions["bob"]
	m.mu.Unlock()
	require.False(t, alice, "alice's window ended and her bucket refilled")
	require.True(t, bob, "bob's window is still running")
	require.Equal(t, toolerr.RateLimited, admit(g, "carol", "read_file").Code, "carol's own usage is kept")
}
