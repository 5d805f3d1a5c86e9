package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/audit/audittest"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/mcpserver"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/fs"
)

func inProcess(t testing.TB, b *mcpserver.Built) *client.Client {
	t.Helper()
	c, err := client.NewInProcessClient(b.MCP())
	require.NoError(t, err)
	connect(t, c)
	return c
}

func TestInProcessDefaultPolicy(t *testing.T) {
	f := newFixture(t)
	c := inProcess(t, f.server(t))

	list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"read_file", "read_multiple_files", "list_directory", "directory_tree",
		"search_files", "grep_files", "file_info",
		"write_file", "edit_file", "create_directory", "move_file", "delete_file"}, toolNames(list.Tools),
		"the writes are offered; they ask the human first (approval_test.go)")

	var out fs.ReadFileOut
	structured(t, callTool(t, c, "read_file", map[string]any{"path": "hello.txt"}), &out)
	require.Equal(t, "hello from toolwarden\n", out.Content)

	var grep fs.GrepOut
	structured(t, callTool(t, c, "grep_files", map[string]any{"pattern": "TODO"}), &grep)
	require.Len(t, grep.Matches, 1)
	require.Equal(t, "src/main.go", grep.Matches[0].Path)
}

func TestInProcessDenials(t *testing.T) {
	f := newFixture(t)
	f.cfg.Policy.Deny = []string{"write_file"}
	c := inProcess(t, f.server(t))
	cases := []struct {
		name string
		tool string
		args map[string]any
		code toolerr.Code
	}{
		{"write tool denied by the policy", "write_file", map[string]any{"path": "x", "content": "y"}, toolerr.DeniedNotAllowed},
		{"dot-dot escape", "read_file", map[string]any{"path": "../secret.txt"}, toolerr.PathOutsideWorkspace},
		{"sibling prefix", "read_file", map[string]any{"path": "../ws_evil/secret.txt"}, toolerr.PathOutsideWorkspace},
		{"absolute path", "read_file", map[string]any{"path": "/etc/passwd"}, toolerr.PathOutsideWorkspace},
		{"symlink out", "read_file", map[string]any{"path": "escape_link"}, toolerr.PathSymlinkEscape},
		{"backslash", "read_file", map[string]any{"path": "..\\secret.txt"}, toolerr.PathInvalid},
		{"unknown field", "read_file", map[string]any{"path": "hello.txt", "mode": "raw"}, toolerr.InvalidSchema},
		{"wrong type", "read_file", map[string]any{"path": 42}, toolerr.InvalidSchema},
		{"escape in list arg", "read_multiple_files", map[string]any{"paths": []any{"hello.txt", "../secret.txt"}}, toolerr.PathOutsideWorkspace},
		{"grep outside", "grep_files", map[string]any{"path": "..", "pattern": "SECRET"}, toolerr.PathOutsideWorkspace},
		{"search pattern escape", "search_files", map[string]any{"pattern": "../**"}, toolerr.PathOutsideWorkspace},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := callTool(t, c, tc.tool, tc.args)
			e := errorOf(t, res)
			require.Equal(t, tc.code, e.Code, e.Message)
			require.NotEmpty(t, e.Message)
			require.NotEmpty(t, e.Hint)
			require.NotContains(t, mustJSON(t, res), secret)
		})
	}
}

func TestInProcessUnknownToolIsProtocolError(t *testing.T) {
	c := inProcess(t, newFixture(t).server(t))
	req := mcp.CallToolRequest{}
	req.Params.Name = "no_such_tool"
	_, err := c.CallTool(ctxT(t), req)
	require.Error(t, err)
}

func TestInProcessAuditChain(t *testing.T) {
	f := newFixture(t)
	f.cfg.Policy.Deny = []string{"write_file"}
	c := inProcess(t, f.server(t))
	callTool(t, c, "read_file", map[string]any{"path": "hello.txt"})
	callTool(t, c, "read_file", map[string]any{"path": "../secret.txt"})
	callTool(t, c, "write_file", map[string]any{"path": "x", "content": "hunter2-SECRET"})

	data, err := os.ReadFile(f.auditPath)
	require.NoError(t, err)
	require.NotContains(t, string(data), "hunter2-SECRET", "raw args must never be audited")
	var outcomes []string
	for _, e := range audittest.Entries(t, f.auditPath) {
		outcomes = append(outcomes, e.Tool+":"+string(e.Outcome))
	}
	require.Equal(t, []string{"read_file:allowed", "read_file:completed", "read_file:denied", "write_file:denied"}, outcomes)
	fh, err := os.Open(f.auditPath)
	require.NoError(t, err)
	defer fh.Close()
	res, err := audit.Verify(fh)
	require.NoError(t, err)
	require.Equal(t, 4, res.Lines)
}

func TestInProcessWritesWhenAllowed(t *testing.T) {
	f := newFixture(t)
	f.cfg.Policy.Allow = append(f.cfg.Policy.Allow, "write_file", "edit_file")
	c := inProcess(t, f.server(t))
	var w fs.WriteFileOut
	structured(t, callTool(t, c, "write_file", map[string]any{"path": "new/dir/a.txt", "content": "one\n", "create_dirs": true}), &w)
	require.True(t, w.Created)
	var e fs.EditOut
	structured(t, callTool(t, c, "edit_file", map[string]any{"path": "new/dir/a.txt",
		"edits": []any{map[string]any{"old_text": "one", "new_text": "two"}}}), &e)
	require.Contains(t, e.Diff, "-one")
	require.Contains(t, e.Diff, "+two")
	got, err := os.ReadFile(f.ws + "/new/dir/a.txt")
	require.NoError(t, err)
	require.Equal(t, "two\n", string(got))
	// Deny still wins over allow.
	f.cfg.Policy.Deny = []string{"write_*"}
	c2 := inProcess(t, f.server(t))
	require.Equal(t, toolerr.DeniedNotAllowed, errorOf(t, callTool(t, c2, "write_file", map[string]any{"path": "b", "content": ""})).Code)
}

func TestInProcessSessionCallLimit(t *testing.T) {
	f := newFixture(t)
	f.cfg.Limits.MaxCallsPerSession = 2
	c := inProcess(t, f.server(t))
	for range 2 {
		require.False(t, callTool(t, c, "file_info", map[string]any{"path": "hello.txt"}).IsError)
	}
	e := errorOf(t, callTool(t, c, "file_info", map[string]any{"path": "hello.txt"}))
	require.Equal(t, toolerr.LimitExceeded, e.Code)
	require.Equal(t, "limits.max_calls_per_session", e.Rule)
}

func TestInProcessOutputCap(t *testing.T) {
	f := newFixture(t)
	f.cfg.Limits.MaxOutputBytesPerCall = 200
	require.NoError(t, os.WriteFile(f.ws+"/big.txt", []byte(strings.Repeat("abcdefghij\n", 100)), 0o644))
	c := inProcess(t, f.server(t))
	res := callTool(t, c, "read_file", map[string]any{"path": "big.txt"})
	e := errorOf(t, res)
	require.Equal(t, toolerr.LimitExceeded, e.Code)
	require.Contains(t, res.Content[1].(mcp.TextContent).Text, "[toolwarden: output truncated")
}

// countingTool is a tool whose handler counts its calls, to prove the guard
// never reaches a handler when it denies or fails.
func countingTool(calls *atomic.Int32) tools.Tool {
	type in struct {
		Path string `json:"path"`
	}
	type out struct {
		OK bool `json:"ok"`
	}
	return tools.New("probe", "Test probe.", tools.Annotations{ReadOnly: true},
		tools.Meta{Toolset: "test", PathArgs: []string{"path"}},
		func(context.Context, in) (out, error) {
			calls.Add(1)
			return out{OK: true}, nil
		})
}

type failingAudit struct{}

func (failingAudit) Append(audit.Entry) error { return errors.New("disk full") }

func TestGuardFailsClosed(t *testing.T) {
	f := newFixture(t)
	f.cfg.Policy.Allow = []string{"probe"}
	cases := []struct {
		name  string
		audit guard.Auditor
		args  map[string]any
		code  toolerr.Code
	}{
		{"audit cannot be written", failingAudit{}, map[string]any{"path": "a"}, toolerr.AuditWrite},
		{"schema violation", audit.Discard{}, map[string]any{"path": "a", "extra": true}, toolerr.InvalidSchema},
		{"path escape", audit.Discard{}, map[string]any{"path": "../a"}, toolerr.PathOutsideWorkspace},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			toolset := []tools.Tool{countingTool(&calls)}
			g, err := mcpserver.NewGuard(f.cfg, toolset, tc.audit)
			require.NoError(t, err)
			s := mcpserver.New(g, toolset, "test", slog.New(slog.NewTextHandler(io.Discard, nil)))
			c, err := client.NewInProcessClient(s.MCP())
			require.NoError(t, err)
			connect(t, c)
			require.Equal(t, tc.code, errorOf(t, callTool(t, c, "probe", tc.args)).Code)
			require.Zero(t, calls.Load(), "the handler must never run when the guard denies")
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
