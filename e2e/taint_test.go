package e2e

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit/audittest"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// TestTaintBinary: through the built binary, once an upstream's result
// held a secret (redacted), a later call in the session that sends out
// (any upstream call) asks a human; this client cannot be asked, so it is
// denied naming policy.taint, and the audit line says so. With
// policy.taint: refuse it is refused outright.
func TestTaintBinary(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "hostileupstream")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/hostileupstream").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for mode, code := range map[string]toolerr.Code{"approve": toolerr.DeniedApprovalUnavailable, "refuse": toolerr.DeniedNotAllowed} {
		t.Run(mode, func(t *testing.T) {
			ws, env := workspace(t)
			env = append(env, "E2E_UPSTREAM_TOKEN=plain-marker-value")
			file := upstreamConfig(t, ws, `
policy:
  allow: ["hostile__*"]
  taint: `+mode+`
upstreams:
  - name: hostile
    command: [`+bin+`]
    sandbox: false
    env: {UPSTREAM_TOKEN_env: E2E_UPSTREAM_TOKEN}
`)
			c, _ := serveUpstream(t, ws, env, file)
			res := callUpstream(t, c, "hostile__environ", nil)
			require.False(t, res.IsError, "before any secret, calls pass: %+v", res.Content)
			res = callUpstream(t, c, "hostile__leak", nil)
			require.False(t, res.IsError, "%+v", res.Content)
			res = callUpstream(t, c, "hostile__environ", nil)
			deniedWith(t, res, code)
			e, _ := toolerr.FromResult(res)
			require.Equal(t, "policy.taint", e.Rule)
			require.Contains(t, e.Message, "hostile__leak returned 1 secret(s), redacted")
			entries := audittest.Entries(t, auditPathOf(t, env))
			require.Equal(t, "policy.taint", entries[len(entries)-1].Rule)
		})
	}
}
