package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// chainStep is one call of a chain played through the binary.
type chainStep struct {
	tool string
	args map[string]any
}

// serveChain serves, from the built binary at policy.taint mode ("" for
// the default) with the policy lines extra, an upstream "c" (the gauntlet's case player) that lists
// the chain's tools, read-only and answering "done", and returns a
// client in a session of its own.
func serveChain(t *testing.T, mode, extra string, steps []chainStep) *client.Client {
	t.Helper()
	var msgs []any
	for i, s := range steps {
		msgs = append(msgs, map[string]any{"jsonrpc": "2.0", "method": "tools/call", "id": i + 1,
			"params": map[string]any{"name": s.tool, "arguments": s.args}})
	}
	b, err := json.Marshal(map[string]any{"input_type": "mcp_tool_sequence", "payload": map[string]any{"jsonrpc_messages": msgs}})
	require.NoError(t, err)
	dir := t.TempDir()
	file := filepath.Join(dir, "chain.json")
	require.NoError(t, os.WriteFile(file, b, 0o644))
	bin := filepath.Join(dir, "gauntletupstream")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/gauntletupstream").CombinedOutput()
	require.NoError(t, err, "%s", out)

	ws, env := workspace(t)
	env = append(env, "XDG_STATE_HOME="+filepath.Join(filepath.Dir(ws), "state"))
	argv, _ := json.Marshal([]string{bin, "--case", file})
	cfg := "policy:\n  allow: [\"c__*\"]\n"
	if mode != "" {
		cfg += "  taint: " + mode + "\n"
	}
	cfg += extra
	cfg += "upstreams:\n  - name: c\n    command: " + string(argv) + "\n    sandbox: false\n"
	conf := upstreamConfig(t, ws, cfg)
	pinned, status := runPin(t, env, "--config", conf)
	require.Equal(t, 0, status, pinned)
	c, _ := serveUpstream(t, ws, env, conf)
	return c
}

// TestChainTaintBinary plays chains of this test's own through the
// binary, each in a session of its own: every step is harmless alone and
// no result holds a secret, yet the step that sends out after a
// credential's variable was read, an autostart location written, a tool
// listed in policy.private_tools run, or a script the session wrote is
// named, is stopped under policy.taint (the
// test's client cannot approve: refused with the rule named); a benign
// chain of the same tools runs through; under refuse the step is refused
// outright.
func TestChainTaintBinary(t *testing.T) {
	t.Parallel()
	send := chainStep{"post", map[string]any{"endpoint": "https://hooks.example.net/in", "note": "ok"}}
	tests := []struct {
		name  string
		mode  string
		extra string // policy lines
		steps []chainStep
		code  toolerr.Code // of the last step; "" when it runs
	}{
		{"credential variable, then a send", "", "", []chainStep{
			{"lookup_var", map[string]any{"name": "STRIPE_API_KEY"}}, send,
		}, toolerr.DeniedApprovalUnavailable},
		{"autostart entry, then a send", "", "", []chainStep{
			{"save", map[string]any{"target": "~/.config/autostart/updater.desktop", "text": "[Desktop Entry]\nExec=/opt/u/run"}}, send,
		}, toolerr.DeniedApprovalUnavailable},
		{"script staged, then run", "", "", []chainStep{
			{"save", map[string]any{"target": "/tmp/tw-job.py", "text": "#!/usr/bin/env python3\nprint('hi')\n"}},
			{"exec", map[string]any{"line": "python3 /tmp/tw-job.py"}},
		}, toolerr.DeniedApprovalUnavailable},
		{"credential variable, then a send, under refuse", "refuse", "", []chainStep{
			{"lookup_var", map[string]any{"name": "${VAULT_TOKEN}"}}, send,
		}, toolerr.DeniedNotAllowed},
		{"a private-data tool read twice, then a send", "", "  private_tools: [\"c__inbox_*\"]\n", []chainStep{
			{"inbox_read", map[string]any{"id": "42"}}, {"inbox_read", map[string]any{"id": "43"}}, send,
		}, toolerr.DeniedApprovalUnavailable},
		{"benign: notes, an editor variable, a send", "", "", []chainStep{
			{"save", map[string]any{"target": "notes/todo.md", "text": "- ship the release; set GITHUB_TOKEN in CI first"}},
			{"lookup_var", map[string]any{"name": "EDITOR"}},
			{"exec", map[string]any{"line": "python3 notes/todo.md"}},
			send,
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := serveChain(t, tt.mode, tt.extra, tt.steps)
			for i, s := range tt.steps {
				res := callUpstream(t, c, "c__"+s.tool, s.args)
				if i < len(tt.steps)-1 || tt.code == "" {
					require.False(t, res.IsError, "step %d (%s): %+v", i, s.tool, res.Content)
					continue
				}
				deniedWith(t, res, tt.code)
				e, _ := toolerr.FromResult(res)
				require.Equal(t, "policy.taint", e.Rule)
			}
		})
	}
}
