package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools/upstream/pin"
)

// fakeUpstream is an in-process MCP server with tools that test each
// rule: a read-only one, one with no annotations, one whose schema is not
// an object, one whose name is too long once namespaced, and one with a
// hostile name.
func fakeUpstream(calls *[]string) *server.MCPServer {
	s := server.NewMCPServer("fake", "1.2.3")
	echo := func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		raw, _ := json.Marshal(req.Params.Arguments)
		*calls = append(*calls, req.Params.Name+" "+string(raw))
		return mcp.NewToolResultText("got " + string(raw)), nil
	}
	s.AddTool(mcp.NewTool("look", mcp.WithString("q", mcp.Required()), mcp.WithReadOnlyHintAnnotation(true)), echo)
	s.AddTool(mcp.Tool{Name: "poke", InputSchema: mcp.ToolInputSchema{Type: "object"}}, echo)
	s.AddTool(mcp.Tool{Name: "arr", InputSchema: mcp.ToolInputSchema{Type: "array"}}, echo)
	s.AddTool(mcp.NewTool(strings.Repeat("n", 60)), echo)
	s.AddTool(mcp.NewTool("bad name/../x"), echo)
	return s
}

func connectFake(t *testing.T, calls *[]string) *Conn {
	t.Helper()
	u := configs.Upstream{Name: "fake", Command: []string{"unused"}}
	c, err := connect(context.Background(), u, transport.NewInProcessTransport(fakeUpstream(calls)), "test")
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestToolsFollowToolwardensRules: names are namespaced; the capability is
// mcp:call:<upstream>/<tool>; only the read-only tool runs without
// approval; every annotation is set; schemas are strict; tools with a
// non-object schema, a name too long or a hostile name are withheld, each
// with its reason.
func TestToolsFollowToolwardensRules(t *testing.T) {
	c := connectFake(t, new([]string))
	require.Equal(t, "fake", c.Server.Name)
	byName := map[string]int{}
	for i, tool := range c.Tools() {
		byName[tool.Tool.Name] = i
		a := tool.Tool.Annotations
		require.NotNil(t, a.ReadOnlyHint)
		require.NotNil(t, a.DestructiveHint)
		require.NotNil(t, a.IdempotentHint)
		require.NotNil(t, a.OpenWorldHint)
		var schema map[string]any
		require.NoError(t, json.Unmarshal(tool.Tool.RawInputSchema, &schema))
		require.Equal(t, false, schema["additionalProperties"], tool.Tool.Name)
	}
	require.Len(t, byName, 2)
	look, poke := c.Tools()[byName["fake__look"]], c.Tools()[byName["fake__poke"]]
	require.Equal(t, []string{"mcp:call:fake/look"}, look.Meta.Capabilities)
	require.False(t, look.Meta.RequiresApproval)
	require.True(t, poke.Meta.RequiresApproval, "no annotation: not read-only")
	require.True(t, *poke.Tool.Annotations.DestructiveHint, "unset hints take the MCP defaults")

	reasons := map[string]string{}
	for _, w := range c.Withheld {
		reasons[w.Tool] = w.Reason
	}
	require.Contains(t, reasons["arr"], `of type "array", not object`)
	require.Contains(t, reasons[strings.Repeat("n", 60)], "over 64")
	require.Contains(t, reasons["bad name/../x"], "is not [A-Za-z0-9_.-]")
}

// TestForwardCallsTheUpstreamsOwnName: the handler sends the upstream's
// own tool name and the validated arguments, and returns its result.
func TestForwardCallsTheUpstreamsOwnName(t *testing.T) {
	var calls []string
	c := connectFake(t, &calls)
	look := c.Tools()[0]
	req := mcp.CallToolRequest{}
	req.Params.Name = "fake__look"
	req.Params.RawArguments = json.RawMessage(`{"q":"x"}`)
	res, err := look.Handler(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, `got {"q":"x"}`, res.Content[0].(mcp.TextContent).Text)
	require.Equal(t, []string{`look {"q":"x"}`}, calls)
}

// TestCallErrors: a cancelled or expired call and an unreachable upstream
// are tool results with codes the model can act on.
func TestCallErrors(t *testing.T) {
	c := connectFake(t, new([]string))
	look := c.Tools()[0]
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := look.Handler(ctx, mcp.CallToolRequest{})
	require.NoError(t, err)
	e, ok := toolerr.FromResult(res)
	require.True(t, ok)
	require.Equal(t, toolerr.Canceled, e.Code)

	lost := callError(context.Background(), "fake", transport.NewError(errors.New("broken pipe")))
	require.Equal(t, toolerr.BackendUnavailable, lost.Code)
	refused := callError(context.Background(), "fake", errors.New("invalid params"))
	require.Equal(t, toolerr.BackendDenied, refused.Code)
}

// TestEnvironIsOnlyWhatTheConfigNames: a command upstream gets PATH and
// the variables its env entries name, never the rest of toolwarden's
// environment, and never a variable that is unset.
func TestEnvironIsOnlyWhatTheConfigNames(t *testing.T) {
	env := map[string]string{"PATH": "/bin", "MY_TOKEN": "t0k", "AWS_SECRET_ACCESS_KEY": "no"}
	u := configs.Upstream{Name: "x", Env: map[string]string{"github_token_env": "MY_TOKEN", "other_env": "UNSET"}}
	got, err := Environ(context.Background(), u, Options{Getenv: func(k string) string { return env[k] }, Log: slogDiscard()})
	require.NoError(t, err)
	require.Equal(t, []string{"PATH=/bin", "GITHUB_TOKEN=t0k"}, got)
}

// TestEnvironReadsSecretFiles: NAME_file gives the upstream the file's
// contents, read again at each start (a rotated file is picked up); a
// file others may read stops the start with an error naming the key and
// never the value.
func TestEnvironReadsSecretFiles(t *testing.T) {
	f := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(f, []byte("first-value\n"), 0o600))
	u := configs.Upstream{Name: "x", Env: map[string]string{"api_token_file": f, "plain_env": "P"}}
	opts := Options{Getenv: vars(map[string]string{"PATH": "/bin", "P": "p"}), Log: slogDiscard()}
	got, err := Environ(context.Background(), u, opts)
	require.NoError(t, err)
	require.Equal(t, []string{"PATH=/bin", "API_TOKEN=first-value", "PLAIN=p"}, got)

	require.NoError(t, os.WriteFile(f, []byte("rotated-value"), 0o600))
	got, err = Environ(context.Background(), u, opts)
	require.NoError(t, err)
	require.Contains(t, got, "API_TOKEN=rotated-value")

	require.NoError(t, os.Chmod(f, 0o644))
	_, err = Environ(context.Background(), u, opts)
	require.ErrorContains(t, err, `upstreams "x".env.api_token_file: `+f+" has mode 0644")
	require.NotContains(t, err.Error(), "rotated-value")
}

// TestHeadersReadSecretFiles: headers_file sends the file's contents in
// the header, read when the connection is made.
func TestHeadersReadSecretFiles(t *testing.T) {
	f := filepath.Join(t.TempDir(), "auth")
	require.NoError(t, os.WriteFile(f, []byte("Bearer from-file\n"), 0o600))
	u := configs.Upstream{Name: "x", URL: "https://x.example/mcp", HeadersFile: map[string]string{"authorization": f},
		HeadersEnv: map[string]string{"x-other": "O"}}
	h, err := headers(context.Background(), u, Options{Getenv: vars(map[string]string{"O": "o"}), Log: slogDiscard()})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"authorization": "Bearer from-file", "x-other": "o"}, h)
}

func vars(m map[string]string) Env { return func(k string) string { return m[k] } }

func pinServer(name, version string) pin.Server { return pin.Server{Name: name, Version: version} }

func slogDiscard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestListingIsRaw: the pinned listing and the schema the guard validates
// hold the keywords mcp-go's decoded mcp.Tool drops (here minProperties
// and the outputSchema), exactly as the upstream sent them.
func TestListingIsRaw(t *testing.T) {
	s := server.NewMCPServer("raw", "0.1.0")
	s.AddTool(mcp.NewToolWithRawSchema("strict", "Needs one argument.",
		json.RawMessage(`{"type":"object","minProperties":1,"properties":{"a":{"type":"string"}}}`)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	u := configs.Upstream{Name: "raw", Command: []string{"unused"}}
	c, err := connect(context.Background(), u, transport.NewInProcessTransport(s), "test")
	require.NoError(t, err)
	defer c.Close()
	def := string(c.Listing().Tools["strict"].Definition)
	require.Contains(t, def, `"minProperties":1`)
	require.Equal(t, pinServer("raw", "0.1.0"), c.Listing().Server)
	require.Contains(t, string(c.Tools()[0].Tool.RawInputSchema), `"minProperties":1`)
	require.Contains(t, string(c.Tools()[0].Tool.RawInputSchema), `"additionalProperties":false`)
}

// TestRecorderKeepsTheTransportsShape: wrapping a transport keeps the
// optional interfaces mcp-go's client looks for, and adds none.
func TestRecorderKeepsTheTransportsShape(t *testing.T) {
	stdio := transport.NewStdio("unused", nil)
	w, _ := record(stdio)
	_, bidi := w.(transport.BidirectionalInterface)
	_, isHTTP := w.(transport.HTTPConnection)
	require.True(t, bidi)
	require.False(t, isHTTP)
	h, err := transport.NewStreamableHTTP("http://127.0.0.1:1/mcp")
	require.NoError(t, err)
	w, _ = record(h)
	_, bidi = w.(transport.BidirectionalInterface)
	_, isHTTP = w.(transport.HTTPConnection)
	require.True(t, bidi && isHTTP)
	w, _ = record(transport.NewInProcessTransport(server.NewMCPServer("x", "1")))
	_, bidi = w.(transport.BidirectionalInterface)
	require.False(t, bidi)
}
