package guard

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// handler is what a tool handler looks like to the harness.
type handler func() (*mcp.CallToolResult, error)

// serve is the smallest caller of the guard, shaped like the MCP middleware:
// the handler runs only when Admit lets the call through.
func serve(g *Guard, call Call, h handler) *mcp.CallToolResult {
	ticket, denial := g.Admit(call)
	if denial != nil {
		return toolerr.Result(denial)
	}
	return ticket.Finish(h())
}

// countingHandler returns a handler that counts its runs and answers text.
func countingHandler(n *atomic.Int64, text string) handler {
	return func() (*mcp.CallToolResult, error) {
		n.Add(1)
		return mcp.NewToolResultText(text), nil
	}
}

func newTestGuard(t testing.TB, audit Auditor, limits Limits) *Guard {
	t.Helper()
	policy, err := NewPolicy([]string{"read_*", "config_get"}, []string{"write_*"})
	require.NoError(t, err)
	tools := []ToolInfo{
		{Name: "read_file", PathArgs: []string{"path", "paths"}},
		{Name: "write_file", PathArgs: []string{"path", "paths"}},
		{Name: "config_get", RequiresTrust: true, PathArgs: []string{"path", "paths"}},
	}
	v := newTestValidator(t, "read_file", "write_file", "config_get")
	return New(Config{Policy: policy, Limits: limits, MaxOutputBytes: 1 << 20}, tools, v, audit)
}

var roomyLimits = Limits{MaxCalls: 1000, MaxOutputBytes: 1 << 30}

// errorOf parses the coded error a denial result carries.
func errorOf(t *testing.T, res *mcp.CallToolResult) toolerr.Error {
	t.Helper()
	require.True(t, res.IsError)
	e, ok := toolerr.FromResult(res)
	require.True(t, ok, "not a coded error: %+v", res.Content)
	return e
}

func TestAdmitFailsClosedWhenAuditFails(t *testing.T) {
	tests := []struct {
		name     string
		call     Call
		wantCode toolerr.Code
		wantRule string
	}{
		{name: "allowed call", call: Call{Tool: "read_file", Session: "s", Args: decodeJSON(t, `{"path":"a.txt"}`)},
			wantCode: toolerr.AuditWrite, wantRule: "audit.write"},
		{name: "denied call stays denied", call: Call{Tool: "write_file", Session: "s", Args: decodeJSON(t, `{"path":"a.txt"}`)},
			wantCode: toolerr.DeniedNotAllowed, wantRule: `deny:"write_*"`},
		{name: "unknown tool stays denied", call: Call{Tool: "nope", Session: "s"},
			wantCode: toolerr.DeniedNotAllowed, wantRule: "tool.known"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			audit := &failingAuditor{}
			g := newTestGuard(t, audit, roomyLimits)
			var ran atomic.Int64

			ticket, denial := g.Admit(tt.call)
			require.Nil(t, ticket)
			require.NotNil(t, denial)
			require.Equal(t, tt.wantCode, denial.Code)
			require.Equal(t, tt.wantRule, denial.Rule)

			res := serve(g, tt.call, countingHandler(&ran, "secret file contents"))
			require.Equal(t, int64(0), ran.Load(), "the handler must never run when the guard cannot audit")
			require.Equal(t, tt.wantCode, errorOf(t, res).Code)
			require.Positive(t, audit.calls, "the guard must have tried to audit")
		})
	}
}

func TestAuditErrorIsKeptAsCause(t *testing.T) {
	g := newTestGuard(t, &failingAuditor{}, roomyLimits)
	_, denial := g.Admit(Call{Tool: "read_file", Session: "s", Args: decodeJSON(t, `{"path":"a"}`)})
	require.NotNil(t, denial)
	require.ErrorIs(t, denial, errDiskFull)
	require.NotContains(t, denial.JSON(), "disk full", "the cause must not reach the model")
}

func TestFinishReportsAnUnauditedResultAsError(t *testing.T) {
	// The "allowed" line is written, the "completed" line fails.
	audit := &failingAuditor{okFor: 1}
	g := newTestGuard(t, audit, roomyLimits)
	var ran atomic.Int64
	res := serve(g, Call{Tool: "read_file", Session: "s", Args: decodeJSON(t, `{"path":"a"}`)}, countingHandler(&ran, "contents"))
	require.Equal(t, int64(1), ran.Load())
	require.Equal(t, toolerr.AuditWrite, errorOf(t, res).Code)
	for _, c := range res.Content {
		require.NotContains(t, fmt.Sprint(c), "contents", "an unaudited result must not reach the model")
	}
}

func TestAuditEntries(t *testing.T) {
	okArgs := `{"path":"a.txt"}`
	tests := []struct {
		name     string
		call     Call
		h        handler
		want     []Outcome
		wantCode []string
		wantRule []string
	}{
		{name: "denied by policy", call: Call{Tool: "write_file", Args: decodeJSON(t, okArgs)},
			want: []Outcome{Deny}, wantCode: []string{"denied.not_allowed"}, wantRule: []string{`deny:"write_*"`}},
		{name: "denied unknown", call: Call{Tool: "exec"},
			want: []Outcome{Deny}, wantCode: []string{"denied.not_allowed"}, wantRule: []string{"tool.known"}},
		{name: "denied untrusted", call: Call{Tool: "config_get", Args: decodeJSON(t, okArgs)},
			want: []Outcome{Deny}, wantCode: []string{"denied.not_allowed"}, wantRule: []string{"trust.required"}},
		{name: "denied bad path", call: Call{Tool: "read_file", Args: decodeJSON(t, `{"path":"../etc/passwd"}`)},
			want: []Outcome{Deny}, wantCode: []string{"invalid_argument.path_outside_workspace"}, wantRule: []string{"path.inside_workspace"}},
		{name: "denied bad schema", call: Call{Tool: "read_file", Args: decodeJSON(t, `{"path":"a","x":1}`)},
			want: []Outcome{Deny}, wantCode: []string{"invalid_argument.schema"}, wantRule: []string{"args.schema"}},
		{name: "completed", call: Call{Tool: "read_file", Args: decodeJSON(t, okArgs)},
			h:    func() (*mcp.CallToolResult, error) { return mcp.NewToolResultText("hi"), nil },
			want: []Outcome{Allow, OutcomeCompleted}, wantCode: []string{"", ""}, wantRule: []string{"allowed", "allowed"}},
		{name: "trusted call completes", call: Call{Tool: "config_get", Trusted: true, Args: decodeJSON(t, okArgs)},
			h:    func() (*mcp.CallToolResult, error) { return mcp.NewToolResultText("hi"), nil },
			want: []Outcome{Allow, OutcomeCompleted}, wantCode: []string{"", ""}, wantRule: []string{"allowed", "allowed"}},
		{name: "failed with a coded result", call: Call{Tool: "read_file", Args: decodeJSON(t, okArgs)},
			h: func() (*mcp.CallToolResult, error) {
				return toolerr.Result(toolerr.New(toolerr.NotFound, "", "no such file")), nil
			},
			want: []Outcome{Allow, OutcomeFailed}, wantCode: []string{"", "not_found"}, wantRule: []string{"allowed", "allowed"}},
		{name: "failed with a coded Go error", call: Call{Tool: "read_file", Args: decodeJSON(t, okArgs)},
			h: func() (*mcp.CallToolResult, error) {
				return nil, fmt.Errorf("reading: %w", toolerr.New(toolerr.TooLarge, "", "too big"))
			},
			want: []Outcome{Allow, OutcomeFailed}, wantCode: []string{"", "limit.too_large"}, wantRule: []string{"allowed", "allowed"}},
		{name: "failed with a plain Go error", call: Call{Tool: "read_file", Args: decodeJSON(t, okArgs)},
			h:    func() (*mcp.CallToolResult, error) { return nil, errors.New("boom") },
			want: []Outcome{Allow, OutcomeFailed}, wantCode: []string{"", "internal"}, wantRule: []string{"allowed", "allowed"}},
		{name: "failed with an uncoded error result", call: Call{Tool: "read_file", Args: decodeJSON(t, okArgs)},
			h:    func() (*mcp.CallToolResult, error) { return mcp.NewToolResultError("plain text failure"), nil },
			want: []Outcome{Allow, OutcomeFailed}, wantCode: []string{"", "internal"}, wantRule: []string{"allowed", "allowed"}},
		{name: "nil result", call: Call{Tool: "read_file", Args: decodeJSON(t, okArgs)},
			h:    func() (*mcp.CallToolResult, error) { return nil, nil },
			want: []Outcome{Allow, OutcomeFailed}, wantCode: []string{"", "internal"}, wantRule: []string{"allowed", "allowed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			audit := &memAuditor{}
			g := newTestGuard(t, audit, roomyLimits)
			tt.call.Session = "sess-42"
			var ran atomic.Int64
			h := tt.h
			if h == nil {
				h = countingHandler(&ran, "must not run")
			}
			serve(g, tt.call, h)
			if tt.h == nil {
				require.Equal(t, int64(0), ran.Load())
			}

			entries := audit.all()
			require.Len(t, entries, len(tt.want), "entries: %+v", entries)
			for i, e := range entries {
				require.Equal(t, tt.want[i], e.Outcome, "entry %d", i)
				require.Equal(t, tt.wantCode[i], e.Code, "entry %d", i)
				require.Equal(t, tt.wantRule[i], e.Rule, "entry %d", i)
				require.Equal(t, "sess-42", e.Session)
				require.Equal(t, tt.call.Tool, e.Tool)
				require.Equal(t, ArgsDigest(tt.call.Args), e.ArgsSHA256)
				require.GreaterOrEqual(t, e.DurationMS, 0.0)
			}
		})
	}
}

func TestAuditNeverHoldsRawArguments(t *testing.T) {
	const secret = "hunter2-SECRET"
	calls := []Call{
		{Tool: "read_file", Args: decodeJSON(t, `{"path":"`+secret+`"}`)},
		{Tool: "read_file", Args: decodeJSON(t, `{"path":"a","paths":["b","`+secret+`"]}`)},
		{Tool: "read_file", Args: decodeJSON(t, `{"path":"../`+secret+`"}`)},
		{Tool: "read_file", Args: decodeJSON(t, `{"path":"a","password":"`+secret+`"}`)},
		{Tool: "read_file", Args: decodeJSON(t, `{"path":"a","count":"`+secret+`"}`)},
		{Tool: "write_file", Args: decodeJSON(t, `{"path":"`+secret+`"}`)},
		{Tool: "config_get", Args: decodeJSON(t, `{"path":"`+secret+`"}`)},
		{Tool: "no_such_tool", Args: decodeJSON(t, `{"token":"`+secret+`"}`)},
	}
	audit := &memAuditor{}
	g := newTestGuard(t, audit, roomyLimits)
	for i, c := range calls {
		c.Session = fmt.Sprint("s", i)
		serve(g, c, func() (*mcp.CallToolResult, error) { return mcp.NewToolResultText("ok"), nil })
	}
	entries := audit.all()
	require.GreaterOrEqual(t, len(entries), len(calls))
	b, err := json.Marshal(entries)
	require.NoError(t, err)
	require.NotContains(t, string(b), secret)
	require.NotContains(t, string(b), "hunter2")
}

func TestArgsDigest(t *testing.T) {
	a := ArgsDigest(decodeJSON(t, `{"b":1,"a":"x"}`))
	require.Len(t, a, 64)
	require.Equal(t, a, ArgsDigest(decodeJSON(t, `{ "a" : "x", "b" : 1 }`)), "key order and spacing must not matter")
	require.NotEqual(t, a, ArgsDigest(decodeJSON(t, `{"b":2,"a":"x"}`)))
	require.Equal(t, ArgsDigest(nil), ArgsDigest(map[string]any{}), "no arguments digest like an empty object")
	require.NotEqual(t, ArgsDigest(decodeJSON(t, `{"n":1.0}`)), ArgsDigest(decodeJSON(t, `{"n":1}`)),
		"numbers are digested as sent")
	require.Len(t, ArgsDigest(make(chan int)), 64, "unencodable arguments still get a digest")
}

func TestSessionCounters(t *testing.T) {
	audit := &memAuditor{}
	g := newTestGuard(t, audit, Limits{MaxCalls: 2, MaxOutputBytes: 1 << 20})
	args := decodeJSON(t, `{"path":"a"}`)
	call := func(session string) *mcp.CallToolResult {
		return serve(g, Call{Tool: "read_file", Session: session, Args: args},
			func() (*mcp.CallToolResult, error) { return mcp.NewToolResultText("x"), nil })
	}

	require.False(t, call("A").IsError)
	require.False(t, call("A").IsError)
	e := errorOf(t, call("A"))
	require.Equal(t, toolerr.LimitExceeded, e.Code)
	require.Equal(t, "limits.max_calls_per_session", e.Rule)

	require.False(t, call("B").IsError, "another session has its own counter")
	require.False(t, call("B").IsError)
	require.True(t, call("B").IsError)

	g.EndSession("A")
	require.False(t, call("A").IsError, "EndSession resets the counters")
	require.True(t, call("B").IsError, "EndSession resets only its session")
}

func TestDeniedCallsDoNotCount(t *testing.T) {
	g := newTestGuard(t, &memAuditor{}, Limits{MaxCalls: 1, MaxOutputBytes: 1 << 20})
	for range 5 {
		_, denial := g.Admit(Call{Tool: "write_file", Session: "s", Args: decodeJSON(t, `{"path":"a"}`)})
		require.NotNil(t, denial)
	}
	tk, denial := g.Admit(Call{Tool: "read_file", Session: "s", Args: decodeJSON(t, `{"path":"a"}`)})
	require.Nil(t, denial)
	tk.Finish(mcp.NewToolResultText("x"), nil)
}

func TestSessionOutputBytes(t *testing.T) {
	g := newTestGuard(t, &memAuditor{}, Limits{MaxCalls: 100, MaxOutputBytes: 10})
	args := decodeJSON(t, `{"path":"a"}`)
	big := func() (*mcp.CallToolResult, error) { return mcp.NewToolResultText("0123456789A"), nil } // 11 bytes

	res := serve(g, Call{Tool: "read_file", Session: "A", Args: args}, big)
	require.False(t, res.IsError, "the call that crosses the budget still completes")
	e := errorOf(t, serve(g, Call{Tool: "read_file", Session: "A", Args: args}, big))
	require.Equal(t, toolerr.LimitExceeded, e.Code)
	require.Equal(t, "limits.max_output_bytes_per_session", e.Rule)

	require.False(t, serve(g, Call{Tool: "read_file", Session: "B", Args: args}, big).IsError)
	g.EndSession("A")
	require.False(t, serve(g, Call{Tool: "read_file", Session: "A", Args: args}, big).IsError)
}

func TestAllowed(t *testing.T) {
	g := newTestGuard(t, audit.Discard{}, roomyLimits)
	tests := []struct {
		tool string
		want bool
	}{
		{"read_file", true},
		{"write_file", false},  // known, denied
		{"read_secret", false}, // allowed by glob, unknown
		{"config_get", true},   // advertised; trust is checked per call
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			require.Equal(t, tt.want, g.Allowed(tt.tool))
		})
	}
}

func TestConcurrentAdmitFinish(t *testing.T) {
	const (
		sessions   = 4
		perSession = 60
		maxCalls   = 25
	)
	audit := &memAuditor{}
	g := newTestGuard(t, audit, Limits{MaxCalls: maxCalls, MaxOutputBytes: 1 << 30})
	args := decodeJSON(t, `{"path":"a"}`)
	var ran [sessions]atomic.Int64
	var wg sync.WaitGroup
	for s := range sessions {
		for range perSession {
			wg.Go(func() {
				serve(g, Call{Tool: "read_file", Session: fmt.Sprint("s", s), Args: args}, countingHandler(&ran[s], "x"))
			})
		}
	}
	// Ending an unrelated session concurrently must not disturb the others.
	wg.Go(func() {
		for range 100 {
			g.EndSession("other")
		}
	})
	wg.Wait()

	for s := range sessions {
		require.Equal(t, int64(maxCalls), ran[s].Load(), "session s%d", s)
	}
	counts := map[Outcome]int{}
	for _, e := range audit.all() {
		counts[e.Outcome]++
	}
	require.Equal(t, sessions*maxCalls, counts[Allow])
	require.Equal(t, sessions*maxCalls, counts[OutcomeCompleted])
	require.Equal(t, sessions*(perSession-maxCalls), counts[Deny])
}
