package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/audit/audittest"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/mcpserver"
	"github.com/toolwarden/toolwarden/mcpserver/httpserve"
	"github.com/toolwarden/toolwarden/tools"
)

const ciToken = "ci-token-fedcba9876543210"

// identityServer serves the fixture over HTTP with two tokens: the main
// one and the "ci" identity's.
func identityServer(t *testing.T, f *fixture) string {
	t.Helper()
	b := f.server(t)
	h, stop := b.HTTPHandler(mcpserver.HTTPOptions{
		Token: testToken, Identities: []mcpserver.Identity{{Name: "ci", Token: ciToken}},
		MaxBodyBytes: 64 << 10, MaxSessions: 10, IdleTimeout: time.Minute,
	})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		stop(ctxT(t))
		srv.Close()
	})
	return srv.URL
}

func httpClient(t *testing.T, url, token string, sse bool) *client.Client {
	t.Helper()
	hdr := map[string]string{"Authorization": "Bearer " + token}
	var c *client.Client
	var err error
	if sse {
		c, err = client.NewSSEMCPClient(url+"/sse", transport.WithHeaders(hdr))
	} else {
		c, err = client.NewStreamableHttpClient(url+"/mcp", transport.WithHTTPHeaders(hdr))
	}
	require.NoError(t, err)
	connect(t, c)
	return c
}

func TestHTTPLimitsFollowTheToken(t *testing.T) {
	f := newFixture(t)
	f.cfg.Limits.MaxCallsPerSession = 3
	url := identityServer(t, f)
	read := map[string]any{"path": "hello.txt"}

	first := httpClient(t, url, testToken, false)
	require.False(t, callTool(t, first, "read_file", read).IsError)
	require.NoError(t, first.Close(), "the first session ends")
	second := httpClient(t, url, testToken, false)
	require.False(t, callTool(t, second, "read_file", read).IsError, "a new session of the same token goes on counting")
	sse := httpClient(t, url, testToken, true)
	require.False(t, callTool(t, sse, "read_file", read).IsError, "so does one over SSE")
	e := errorOf(t, callTool(t, second, "read_file", read))
	require.Equal(t, toolerr.LimitExceeded, e.Code, "the fourth call of the token is over the limit of 3")
	require.Equal(t, "limits.max_calls_per_session", e.Rule)

	ci := httpClient(t, url, ciToken, false)
	require.False(t, callTool(t, ci, "read_file", read).IsError, "another token has its own limits")

	data, err := os.ReadFile(f.auditPath)
	require.NoError(t, err)
	log := string(data)
	require.Contains(t, log, `"identity":"ci"`)
	require.Contains(t, log, `"identity":"`+httpserve.TokenIdentity(testToken)+`"`)
	require.NotContains(t, log, testToken, "the identity never reveals the token")
}

func TestRequiresTrustNeverRunsForAModel(t *testing.T) {
	f := newFixture(t)
	f.cfg.Policy.RequireTrust = []string{"file_info"}
	b := f.server(t)
	url := identityServer(t, f)
	args := map[string]any{"path": "hello.txt"}
	raw, err := json.Marshal(args)
	require.NoError(t, err)

	inproc, err := client.NewInProcessClient(b.MCP())
	require.NoError(t, err)
	connect(t, inproc)
	for name, c := range map[string]*client.Client{"in-process": inproc, "http": httpClient(t, url, testToken, false)} {
		t.Run(name, func(t *testing.T) {
			list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
			require.NoError(t, err)
			require.NotContains(t, toolNames(list.Tools), "file_info", "not advertised")
			require.Contains(t, toolNames(list.Tools), "read_file")
			e := errorOf(t, callTool(t, c, "file_info", args))
			require.Equal(t, "trust.required", e.Rule, "allowlisted, yet a model may not call it")
		})
	}

	res, err := b.Call(ctxT(t), "file_info", raw, false)
	require.NoError(t, err)
	require.Equal(t, "trust.required", errorOf(t, res).Rule, "an untrusted operator call is refused too")
	res, err = b.Call(ctxT(t), "file_info", raw, true)
	require.NoError(t, err)
	require.False(t, res.IsError, "the trusted operator call runs: %+v", res.Content)

	// A normal tool gives the same result to an operator call as to a model's.
	viaMCP := callTool(t, inproc, "read_file", args)
	viaCall, err := b.Call(ctxT(t), "read_file", raw, false)
	require.NoError(t, err)
	require.Equal(t, viaMCP.StructuredContent, viaCall.StructuredContent)
	require.Equal(t, viaMCP.Content, viaCall.Content)

	var trusted int
	for _, e := range audittest.Entries(t, f.auditPath) {
		if e.Trusted {
			require.Equal(t, "file_info", e.Tool)
			trusted++
		}
	}
	require.Equal(t, 2, trusted, "the trusted call's decision and completion are audited as trusted")
}

func TestExplainIsTheCallsDecision(t *testing.T) {
	f := newFixture(t)
	f.cfg.Capabilities.Grant = []string{"fs:read:src/**"}
	f.cfg.Limits.Tools = map[string]configs.ToolLimits{"read_file": {MaxCalls: 1}}
	b := f.server(t)
	c, err := client.NewInProcessClient(b.MCP())
	require.NoError(t, err)
	connect(t, c)
	cases := map[string]string{`{"path":"src/main.go"}`: "", `{"path":"hello.txt"}`: "capabilities.missing", `{"path":"../x"}`: "path.inside_workspace"}
	for args, rule := range cases {
		d := b.Explain(ctxT(t), "read_file", json.RawMessage(args), false)
		if rule == "" {
			require.Equal(t, guard.Allow, d.Outcome, "%s", d)
			continue
		}
		require.Equal(t, rule, d.Rule)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(args), &m))
		require.Equal(t, rule, errorOf(t, callTool(t, c, "read_file", m)).Rule, "the real call is denied by the same rule")
	}
	require.False(t, callTool(t, c, "read_file", map[string]any{"path": "src/main.go"}).IsError, "explain counted nothing")
	d := b.Explain(ctxT(t), "read_file", json.RawMessage(`{"path":"src/main.go"}`), false)
	require.Equal(t, "limits.tools.read_file.max_calls", d.Missing, "explain sees the local identity's usage")
}

// postStateless sends one tools/call of the stateless 2026-07-28 protocol:
// no session, no initialize.
func postStateless(t *testing.T, url, token string) string {
	t.Helper()
	meta := map[string]any{
		mcp.MetaKeyProtocolVersion:    mcp.ProtocolVersion20260728,
		mcp.MetaKeyClientInfo:         map[string]any{"name": "stateless", "version": "1"},
		mcp.MetaKeyClientCapabilities: map[string]any{},
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": mcp.MethodToolsCall,
		"params": map[string]any{"name": "read_file", "arguments": map[string]any{"path": "hello.txt"}, "_meta": meta}})
	require.NoError(t, err)
	res := testenv.PostMCP(t, url+"/mcp", map[string]string{
		"Authorization": "Bearer " + token, mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728,
		mcp.HeaderMethod: string(mcp.MethodToolsCall), mcp.HeaderName: "read_file",
	}, string(body))
	out, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, 200, res.StatusCode, string(out))
	return string(out)
}

func TestStatelessCallsAreCountedPerToken(t *testing.T) {
	f := newFixture(t)
	f.cfg.Limits.MaxCallsPerSession = 2
	url := identityServer(t, f)
	require.Contains(t, postStateless(t, url, testToken), "hello from toolwarden")
	require.Contains(t, postStateless(t, url, testToken), "hello from toolwarden")
	require.Contains(t, postStateless(t, url, testToken), "limits.max_calls_per_session", "session-less calls of one token share its limits")
	require.Contains(t, postStateless(t, url, ciToken), "hello from toolwarden", "and not another token's")
}

// TestStatelessLimitsStartAgainAfterTheWindow is the regression of the
// lockout found under load: over the stateless protocol there is no
// session to end, so a token that reached max_calls_per_session stayed
// denied until the server restarted. Its counts now start again after
// limits.window, and the denial says when (retry_after).
func TestStatelessLimitsStartAgainAfterTheWindow(t *testing.T) {
	f := newFixture(t)
	f.cfg.Limits.MaxCallsPerSession, f.cfg.Limits.Window = 2, 3*time.Second
	url := identityServer(t, f)
	require.Contains(t, postStateless(t, url, testToken), "hello from toolwarden")
	require.Contains(t, postStateless(t, url, testToken), "hello from toolwarden")
	denied := postStateless(t, url, testToken)
	require.Contains(t, denied, "limits.max_calls_per_session")
	m := regexp.MustCompile(`"io.toolwarden/error":\{[^}]*"retry_after":(\d+)`).FindStringSubmatch(denied)
	require.NotNil(t, m, "the structured error says when to retry: %s", denied)
	wait, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	require.True(t, wait >= 1 && wait <= 3, "retry_after %d is within the window", wait)
	time.Sleep(time.Duration(wait) * time.Second)
	require.Contains(t, postStateless(t, url, testToken), "hello from toolwarden", "retry_after later the window has started again")
}

type slowIn struct {
	Wait string `json:"wait" jsonschema:"how long"`
}

type slowOut struct {
	Done bool `json:"done"`
}

func TestPerToolTimeout(t *testing.T) {
	slow := tools.New("slow", "Sleeps.", tools.Annotations{Title: "Slow", ReadOnly: true}, tools.Meta{Toolset: "test"},
		func(ctx context.Context, in slowIn) (slowOut, error) {
			d, _ := time.ParseDuration(in.Wait)
			select {
			case <-time.After(d):
				return slowOut{Done: true}, nil
			case <-ctx.Done():
				return slowOut{}, ctx.Err()
			}
		})
	f := newFixture(t)
	f.cfg.Policy.Allow = []string{"slow"}
	f.cfg.Limits.Tools = map[string]configs.ToolLimits{"sl*": {Timeout: 100 * time.Millisecond}}
	g, err := mcpserver.NewGuard(f.cfg, []tools.Tool{slow}, audit.Discard{})
	require.NoError(t, err)
	s := mcpserver.New(g, []tools.Tool{slow}, "test", slog.New(slog.DiscardHandler))
	c, err := client.NewInProcessClient(s.MCP())
	require.NoError(t, err)
	connect(t, c)
	require.False(t, callTool(t, c, "slow", map[string]any{"wait": "1ms"}).IsError)
	e := errorOf(t, callTool(t, c, "slow", map[string]any{"wait": "10s"}))
	require.Equal(t, toolerr.Timeout, e.Code)
	require.Equal(t, "limits.tools.sl*.timeout", e.Rule)
	require.Contains(t, e.Hint, "limits.tools.sl*.timeout")
}

// TestPanickingToolFailsTheCallNotTheServer: a tool handler runs on its own
// goroutine (so the deadline can end the call), out of reach of mcp-go's
// recovery, or in place on a stdio worker, where that recovery would leave
// the call without its audited end; a panic must fail the call, audited,
// and leave the server serving.
func TestPanickingToolFailsTheCallNotTheServer(t *testing.T) {
	boom := tools.New("boom", "Panics.", tools.Annotations{Title: "Boom", ReadOnly: true}, tools.Meta{Toolset: "test"},
		func(ctx context.Context, in slowIn) (slowOut, error) {
			if in.Wait == "panic" {
				panic("tool bug")
			}
			return slowOut{Done: true}, nil
		})
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			f := newFixture(t)
			f.cfg.Policy.Allow = []string{"boom"}
			audit, err := audit.Open(f.auditPath)
			require.NoError(t, err)
			t.Cleanup(func() { audit.Close() })
			g, err := mcpserver.NewGuard(f.cfg, []tools.Tool{boom}, audit)
			require.NoError(t, err)
			c := tr.client(t, mcpserver.New(g, []tools.Tool{boom}, "test", slog.New(slog.DiscardHandler)))
			e := errorOf(t, callTool(t, c, "boom", map[string]any{"wait": "panic"}))
			require.Equal(t, toolerr.Internal, e.Code)
			require.NotContains(t, e.Message, "goroutine", "no stack reaches the model")
			require.False(t, callTool(t, c, "boom", map[string]any{"wait": "1ms"}).IsError, "the server still serves")
			require.Equal(t, []string{"boom:allowed:allowed", "boom:failed:allowed", "boom:allowed:allowed", "boom:completed:allowed"},
				auditTrail(t, f.auditPath))
		})
	}
}
