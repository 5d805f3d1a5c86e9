package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// TestEgressAsOrdinaryAccount is TestEgressThroughBinary with the server
// started as the ordinary test account, as an IDE would start it: the
// rootless backends (runsc-rootless, bwrap-rootless) reach the allowed
// local host through the proxy, every other way out is refused, the
// real credential is nowhere in the sandbox, and each connection is an
// audit line of the call.
func TestEgressAsOrdinaryAccount(t *testing.T) {
	target := newEgressTarget(t)
	for _, backend := range []string{"runsc", "bwrap"} {
		t.Run(backend, func(t *testing.T) {
			a := startAsAccount(t, backend, func(base string) string {
				ca := filepath.Join(base, "ca.pem")
				require.NoError(t, os.WriteFile(ca, target.ca.PEM, 0o644))
				return target.config(ca)
			}, "EGRESS_TEST_TOKEN="+egressToken)
			out, sandbox := runProbe(t, a.client, target.port, egressToken)
			require.True(t, strings.HasPrefix(sandbox, backend+"-rootless"), "an ordinary user's server runs the rootless backend: %s", sandbox)
			target.check(t, out, a.audit)
		})
	}
}

// accountServer is a toolwarden serve run as the ordinary test account.
type accountServer struct {
	client *client.Client
	ws     string // the account's private (0700) project
	audit  string // the audit log
}

// startAsAccount starts the built binary as the ordinary account with the
// config config(base) returns (base is a directory the account can
// read), run_script allowed without approval, on backend.
func startAsAccount(t *testing.T, backend string, config func(base string) string, env ...string) accountServer {
	t.Helper()
	testenv.Root(t) // to start the server as another account
	need := testenv.Need(t, AccountEnv, AccountHomeEnv)
	acct := lookupAccount(t, need[0])

	base, bin := accountDir(t, "toolwarden-egress-rootless-")
	ws := filepath.Join(base, "project")
	audit := filepath.Join(base, "audit")
	for _, d := range []string{ws, audit} {
		require.NoError(t, os.Mkdir(d, 0o700))
	}
	acct.chown(t, ws, audit)
	cfg := filepath.Join(base, "toolwarden.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(config(base)), 0o644))

	goBin, err := exec.LookPath("go")
	require.NoError(t, err)
	env = append([]string{"HOME=" + need[1], "USER=" + acct.name, "PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin",
		"TOOLWARDEN_AUDIT_PATH=" + filepath.Join(audit, "audit.jsonl"), "TOOLWARDEN_EXEC_BACKEND=" + backend}, env...)
	tr := transport.NewStdioWithOptions(bin, env,
		[]string{"serve", "--config", cfg, "--workspace", ws, "--allow", "run_script", "--approval", "run_script=allow"},
		transport.WithCommandFunc(acct.commandIn(ws)))
	c := connectAs(t, client.NewClient(tr, client.WithDiscoverTimeout(30*time.Second)), mcp.LATEST_PROTOCOL_VERSION)
	return accountServer{client: c, ws: ws, audit: filepath.Join(audit, "audit.jsonl")}
}
