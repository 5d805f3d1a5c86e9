package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/mcpserver"
	"github.com/toolwarden/toolwarden/tools"
)

// fixture is a workspace inside a parent directory that also holds a
// secret, so that escapes have something to find.
type fixture struct {
	parent, ws, auditPath string
	cfg                   configs.Config
}

const secret = "TOP-SECRET-OUTSIDE-WORKSPACE"

func newFixture(t testing.TB) *fixture {
	t.Helper()
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	files := map[string]string{
		"ws/hello.txt":       "hello from toolwarden\n",
		"ws/src/main.go":     "package main\n\nfunc main() {} // TODO: more\n",
		"ws/docs/guide.md":   "# Guide\n",
		"secret.txt":         secret + "\n",
		"ws_evil/secret.txt": secret + "\n",
	}
	for name, content := range files {
		p := filepath.Join(parent, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	require.NoError(t, os.Symlink(filepath.Join(parent, "secret.txt"), filepath.Join(ws, "escape_link")))
	t.Chdir(parent)
	// The TOOLWARDEN_ARTIFACTS_* variables of `scripts/services env` are
	// kept: with them configs.Load configures the artifact store, so its
	// tools are built, snapshotted and checked like the others.
	for _, k := range []string{"TOOLWARDEN_CONFIG", "TOOLWARDEN_AUDIT_PATH", "TOOLWARDEN_POLICY_ALLOW", "TOOLWARDEN_WORKSPACE"} {
		t.Setenv(k, "")
	}
	l, err := configs.Load(configs.Options{})
	require.NoError(t, err)
	cfg := l.Config
	cfg.Workspace = ws
	cfg.Audit.Path = filepath.Join(parent, "audit.jsonl")
	// The exec toolset probes a real sandbox; tests that need it call
	// withExec.
	cfg.Exec.Interpreters = nil
	cfg.Exec.StateDir = execStateDir
	// Tests of what tools do run them without asking a human; the
	// approval tests (approval_test.go) call withApproval to ask.
	cfg.Approval.Modes = map[string]string{"*": "allow"}
	return &fixture{parent: parent, ws: ws, auditPath: cfg.Audit.Path, cfg: cfg}
}

// server builds a server over the fixture with a real audit log.
func (f *fixture) server(t testing.TB) *mcpserver.Built {
	t.Helper()
	audit, err := audit.Open(f.auditPath)
	require.NoError(t, err)
	t.Cleanup(func() { audit.Close() })
	b, err := mcpserver.Build(context.Background(), f.cfg, audit, "test", slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	if f.cfg.Graph.URI != "" {
		// The service environment is set (scripts/test, or eval "$(scripts/services env)"):
		// the graph toolset must then be there, so that snapshots and
		// invariants cover it.
		for _, u := range b.Unavailable {
			require.NotEqual(t, "graph", u.Toolset, "a configured graph backend must open: %s", u.Reason)
		}
	}
	return b
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connect starts and initializes c.
func connect(t testing.TB, c *client.Client) {
	t.Helper()
	ctx := ctxT(t)
	require.NoError(t, c.Start(ctx))
	t.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "toolwarden-test", Version: "1"}
	_, err := c.Initialize(ctx, init)
	require.NoError(t, err)
}

func callTool(t *testing.T, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(ctxT(t), req)
	require.NoError(t, err)
	return res
}

// errorOf parses a tool error result.
func errorOf(t *testing.T, res *mcp.CallToolResult) toolerr.Error {
	t.Helper()
	require.True(t, res.IsError, "expected an error result, got %+v", res)
	e, ok := toolerr.FromResult(res)
	require.True(t, ok, "not a coded error: %+v", res.Content)
	return e
}

// structured decodes a success result's structured content into out.
func structured(t *testing.T, res *mcp.CallToolResult, out any) {
	t.Helper()
	require.False(t, res.IsError, "unexpected error: %+v", res.Content)
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, out))
}

func mcpTools(ts []tools.Tool) []mcp.Tool {
	out := make([]mcp.Tool, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.Tool)
	}
	return out
}

func toolNames(tools []mcp.Tool) []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	return names
}
