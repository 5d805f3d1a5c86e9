package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/audit/audittest"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// TestRunOutlivesCallTimeout: limits.call_timeout never cuts run_script's
// own timeout, and a run stopped by a limit, the sandbox's timeout or the
// call deadline an operator set for the tool, returns what it printed so
// far with limit_hit instead of a bare limit.timeout. (The case,
// scaled down: call_timeout 2 s, a 4 s run of a script that prints a line
// and then sleeps 10 s.) The tool deadline's case allows 30 s of grace:
// killing and removing a gVisor sandbox takes ~0.3 s on a quiet machine,
// but more than the default 2 s under a loaded CI run, where the call
// was then (rightly) abandoned.
func TestRunOutlivesCallTimeout(t *testing.T) {
	testenv.Root(t) // the sandbox
	for _, tc := range []struct {
		name, limits, outcome string
	}{
		{"call_timeout below the run's timeout", "limits:\n  call_timeout: 2s\n", string(guard.OutcomeCompleted)},
		{"tool timeout below the run's timeout", "limits:\n  call_timeout: 2s\n  timeout_grace: 30s\n  tools:\n    run_script: {timeout: 2s}\n", "completed_late"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, env := workspace(t)
			cfg := filepath.Join(t.TempDir(), "toolwarden.yaml")
			require.NoError(t, os.WriteFile(cfg, []byte(tc.limits), 0o644))
			c, err := client.NewStdioMCPClient(binary, env, "serve", "--workspace", ws, "--config", cfg,
				"--allow", "run_script", "--approval", "run_script=allow")
			require.NoError(t, err)
			defer c.Close()
			initialize(t, c)

			out := callJSON(t, c, "run_script", map[string]any{"interpreter": "bash",
				"script": "echo before; exec sleep 10", "timeout_seconds": 4})
			require.Equal(t, "before\n", out["stdout"], "what the run printed is kept")
			require.Equal(t, "timeout", out["limit_hit"])

			var trail []string
			for _, e := range auditEntries(t, env) {
				if e.Tool == "run_script" {
					trail = append(trail, string(e.Outcome))
				}
			}
			require.Equal(t, []string{"allowed", tc.outcome}, trail)
		})
	}
}

// auditEntries reads the audit file of the server of env, after checking
// its hash chain.
func auditEntries(t *testing.T, env []string) []audit.Entry {
	t.Helper()
	p := auditPathOf(t, env)
	_, err := audit.VerifyFiles([]string{p})
	require.NoError(t, err)
	return audittest.Entries(t, p)
}
