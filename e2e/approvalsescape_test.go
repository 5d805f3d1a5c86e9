package e2e

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/oauth/oauthtest"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// hostileSubject is an OAuth sub as a malicious identity provider signs
// it: a window title (OSC 0 ... BEL), a screen clear (CSI 2J), an 8-bit
// CSI, a right-to-left override, a newline that starts a fake table row,
// and the line and paragraph separators.
const hostileSubject = "mallory\x1b]0;pwned\a\x1b[2J\u009b31m\u202e\nfake0000  srv  write_file  bob  s  1m  ok\u2028\u2029end"

// rawTerminalBytes are what must never reach the terminal from a server's
// field: each would be acted on, not shown.
var rawTerminalBytes = []string{"\x1b", "\a", "\u009b", "\u202e", "\u2028", "\u2029"}

// TestApprovalsTerminalEscapesIdentity: a call waits under an identity
// whose subject is full of terminal controls; `approvals list` and
// `approvals watch` show it escaped, on one line, in one row.
func TestApprovalsTerminalEscapesIdentity(t *testing.T) {
	t.Parallel()
	iss := oauthtest.New(t)
	ws, env := workspace(t)
	runtime := t.TempDir()
	env = append(env, "XDG_RUNTIME_DIR="+runtime)
	base, _ := startOAuthServer(t, ws, env, iss.URL, "    audience: "+testenv.Audience+"\n",
		"approval:\n  channel: [terminal]\n")
	c, err := client.NewStreamableHttpClient(base+"/mcp", transport.WithHTTPHeaders(map[string]string{
		"Authorization": "Bearer " + iss.Sign(t, iss.Claims(hostileSubject, testenv.Audience))}))
	require.NoError(t, err)
	require.NoError(t, c.Start(ctxT(t)))
	t.Cleanup(func() { c.Close() })
	initialize(t, c)
	require.Eventually(t, func() bool {
		m, _ := filepath.Glob(filepath.Join(runtime, "toolwarden", "*.sock"))
		return len(m) == 1
	}, 30*time.Second, 10*time.Millisecond, "serve made its control socket")

	res := writeAsync(t, c, "notes/escape.txt", "x\n")
	id := waitingID(t, env)

	out, err := approvalsCLI(t, env, "list")
	require.NoError(t, err, out)
	requireNoTerminalControls(t, out)
	rows := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, rows, 2, "a header and one row:\n%s", out)
	require.Contains(t, rows[1], id)
	require.Contains(t, rows[1], `mallory\u{001B}]0;pwned\u{0007}`)

	out, err = approvalsCLI(t, env, "list", "--json")
	require.NoError(t, err, out)
	requireNoTerminalControls(t, out)

	shown := watchOnce(t, env)
	requireNoTerminalControls(t, shown)
	require.Regexp(t, `\nidentity: oauth:mallory\\u\{001B\}[^\n]*\\u\{2029\}end@`+regexp.QuoteMeta(iss.URL)+`\nsession:  `, shown)

	out, err = approvalsCLI(t, env, "deny", id)
	require.NoError(t, err, out)
	require.Equal(t, "denied.approval_declined", <-res)
}

// watchOnce runs `approvals watch` until it asks about a call, and returns
// what it printed.
func watchOnce(t *testing.T, env []string) string {
	t.Helper()
	watch := exec.Command(binary, "approvals", "watch")
	watch.Env = env
	stdin, err := watch.StdinPipe()
	require.NoError(t, err)
	out := &ptyOutput{} // written by exec's copying goroutine
	watch.Stdout, watch.Stderr = out, out
	require.NoError(t, watch.Start())
	t.Cleanup(func() { _ = watch.Process.Kill(); _ = watch.Wait() })
	require.Eventually(t, func() bool { return strings.Contains(out.after(0), "Approve this call? [y/n]") },
		30*time.Second, 10*time.Millisecond, "%q", out.after(0))
	require.NoError(t, stdin.Close()) // Ctrl-D: watch ends, nothing decided
	require.NoError(t, watch.Wait())
	return out.after(0)
}

// requireNoTerminalControls fails when out has a byte a terminal acts on.
func requireNoTerminalControls(t *testing.T, out string) {
	t.Helper()
	for _, b := range rawTerminalBytes {
		require.NotContains(t, out, b, "raw %q reached the terminal:\n%q", b, out)
	}
	require.NotContains(t, out, "\x9b", "a raw 8-bit CSI byte reached the terminal")
}
