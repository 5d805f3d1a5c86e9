package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit/audittest"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// person answers the server's approval questions for the end-to-end tests.
type person struct {
	mu        sync.Mutex
	questions []string
	action    mcp.ElicitationResponseAction
	identical bool
	delay     time.Duration
}

func (p *person) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	p.mu.Lock()
	p.questions = append(p.questions, req.Params.Message)
	action, identical, delay := p.action, p.identical, p.delay
	p.mu.Unlock()
	select {
	case <-time.After(delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	res := &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: action}}
	if action == mcp.ElicitationResponseActionAccept {
		res.Content = map[string]any{"approve_identical": identical}
	}
	return res, nil
}

func (p *person) set(action mcp.ElicitationResponseAction, identical bool, delay time.Duration) {
	p.mu.Lock()
	p.action, p.identical, p.delay = action, identical, delay
	p.mu.Unlock()
}

func (p *person) asked() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.questions)
}

// stdioClient starts `toolwarden serve` with args and connects with version.
func stdioClient(t *testing.T, env []string, version string, h client.ElicitationHandler, args ...string) *client.Client {
	t.Helper()
	// The server probes the sandbox at start, which can take longer than
	// the default server/discover probe on a loaded machine; the client
	// would then fall back to the older protocol.
	opts := []client.ClientOption{client.WithDiscoverTimeout(30 * time.Second)}
	if h != nil {
		opts = append(opts, client.WithElicitationHandler(h))
	}
	c := client.NewClient(transport.NewStdio(binary, env, append([]string{"serve"}, args...)...), opts...)
	return connectAs(t, c, version)
}

func connectAs(t *testing.T, c *client.Client, version string) *client.Client {
	t.Helper()
	require.NoError(t, c.Start(ctxT(t)))
	t.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcp.Implementation{Name: "e2e-approval", Version: "1"}
	_, err := c.Initialize(ctxT(t), init)
	require.NoError(t, err)
	require.Equal(t, version, c.ProtocolVersion())
	return c
}

func write(t *testing.T, c *client.Client, path, content string) (code string) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = "write_file"
	req.Params.Arguments = map[string]any{"path": path, "content": content, "create_dirs": true}
	res, err := c.CallTool(ctxT(t), req)
	require.NoError(t, err)
	if !res.IsError {
		return ""
	}
	return string(toolerr.ErrorCode(res))
}

func readWS(ws, rel string) string {
	b, err := os.ReadFile(filepath.Join(ws, rel))
	if err != nil {
		return "<missing>"
	}
	return string(b)
}

// approvalScenario runs the approval checks through one client: accepted,
// declined, timed out, identical calls, changed arguments. The server's
// approval timeout is two seconds; the late answer comes after four.
func approvalScenario(t *testing.T, c *client.Client, p *person, ws string, remembers bool) {
	p.set(mcp.ElicitationResponseActionAccept, false, 0)
	require.Empty(t, write(t, c, "out/ok.txt", "approved\n"))
	require.Equal(t, "approved\n", readWS(ws, "out/ok.txt"))
	require.True(t, strings.HasPrefix(p.questions[0], "Create file out/ok.txt (9 bytes, creating out if missing)"), p.questions[0])

	p.set(mcp.ElicitationResponseActionDecline, false, 0)
	require.Equal(t, "denied.approval_declined", write(t, c, "out/no.txt", "declined\n"))
	require.Equal(t, "<missing>", readWS(ws, "out/no.txt"))

	p.set(mcp.ElicitationResponseActionAccept, false, 4*time.Second)
	require.Equal(t, "denied.approval_timeout", write(t, c, "out/late.txt", "late\n"))
	require.Equal(t, "<missing>", readWS(ws, "out/late.txt"))

	p.set(mcp.ElicitationResponseActionAccept, true, 0)
	before := p.asked()
	require.Empty(t, write(t, c, "out/same.txt", "v1\n"))
	require.Empty(t, write(t, c, "out/same.txt", "v1\n"))
	if remembers {
		require.Equal(t, before+1, p.asked(), "approve identical calls: not asked again")
	} else {
		require.Equal(t, before+2, p.asked(), "no session to remember the approval in")
	}
	asked := p.asked()
	require.Empty(t, write(t, c, "out/same.txt", "v2\n"))
	require.Equal(t, asked+1, p.asked(), "changed arguments need a new approval")
	require.Equal(t, "v2\n", readWS(ws, "out/same.txt"))
}

func TestApprovalStdioBinary(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-11-25", mcp.LATEST_PROTOCOL_VERSION} {
		t.Run(version, func(t *testing.T) {
			ws, env := workspace(t)
			env = append(env, "TOOLWARDEN_APPROVAL_TIMEOUT=2s")
			p := &person{}
			c := stdioClient(t, env, version, p, "--workspace", ws)
			approvalScenario(t, c, p, ws, true)

			bare := stdioClient(t, env, version, nil, "--workspace", ws)
			require.Equal(t, "denied.approval_unavailable", write(t, bare, "out/bare.txt", "x"))
			require.Equal(t, "<missing>", readWS(ws, "out/bare.txt"))

			trail := audittest.Trail(t, filepath.Join(filepath.Dir(ws), "audit.jsonl"))
			for _, want := range []string{"needs_approval:approval.elicit:", "approved:approval.elicit:",
				"declined:approval.declined:denied.approval_declined", "declined:approval.timeout:denied.approval_timeout",
				"approved:approval.elicit.session:", "approved:approval.session:",
				"declined:approval.elicit:denied.approval_unavailable"} {
				require.Contains(t, trail, want)
			}
			require.NotContains(t, auditText(t, filepath.Join(filepath.Dir(ws), "audit.jsonl")), "approved\\n", "raw arguments are never audited")
			out, err := exec.Command(binary, "audit", "verify", filepath.Join(filepath.Dir(ws), "audit.jsonl")).CombinedOutput()
			require.NoError(t, err, string(out))
		})
	}
}

func TestApprovalHTTPBinary(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-11-25", mcp.LATEST_PROTOCOL_VERSION} {
		t.Run(version, func(t *testing.T) {
			ws, env := workspace(t)
			base := startHTTP(t, ws, append(env, "TOOLWARDEN_APPROVAL_TIMEOUT=2s"))
			open := func(h client.ElicitationHandler) *client.Client {
				tr, err := transport.NewStreamableHTTP(base+"/mcp",
					transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer e2e-token-0123456789"}))
				require.NoError(t, err)
				var opts []client.ClientOption
				if h != nil {
					opts = append(opts, client.WithElicitationHandler(h))
				}
				return connectAs(t, client.NewClient(tr, opts...), version)
			}
			p := &person{}
			// The stateless 2026 protocol has no session to remember
			// "approve identical calls" for.
			approvalScenario(t, open(p), p, ws, version != mcp.LATEST_PROTOCOL_VERSION)
			require.Equal(t, "denied.approval_unavailable", write(t, open(nil), "out/bare.txt", "x"))
		})
	}
}

// TestApprovalModesBinary: deny and allow, from --approval and from the
// config file; flags can tighten the file but not loosen it.
func TestApprovalModesBinary(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	p := &person{action: mcp.ElicitationResponseActionAccept}

	c := stdioClient(t, env, "2025-11-25", p, "--workspace", ws, "--approval", "write_file=allow", "--approval", "delete_*=deny")
	require.Empty(t, write(t, c, "allowed.txt", "no question\n"))
	require.Equal(t, "no question\n", readWS(ws, "allowed.txt"))
	require.Zero(t, p.asked(), "allow runs without asking")
	req := mcp.CallToolRequest{}
	req.Params.Name = "delete_file"
	req.Params.Arguments = map[string]any{"path": "hello.txt"}
	res, err := c.CallTool(ctxT(t), req)
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Contains(t, res.Content[0].(mcp.TextContent).Text, "\nRule: approval.deny")
	require.Equal(t, "hello from toolwarden\n", readWS(ws, "hello.txt"))

	cfg := filepath.Join(t.TempDir(), "toolwarden.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("approval:\n  modes:\n    write_file: deny\n"), 0o600))
	c = stdioClient(t, env, "2025-11-25", p, "--workspace", ws, "--config", cfg, "--approval", "write_file=allow")
	require.Equal(t, "denied.not_allowed", write(t, c, "denied.txt", "x"), "a flag cannot loosen the file's deny")
	require.Equal(t, "<missing>", readWS(ws, "denied.txt"))
	require.Zero(t, p.asked())

	// The widening is logged at start and shown by config check.
	require.NoError(t, os.WriteFile(cfg, []byte("workspace: "+ws+"\napproval:\n  modes:\n    write_file: allow\n"), 0o600))
	cmd := exec.Command(binary, "config", "check", "--config", cfg)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), `approval.modes sets "write_file" to allow`)
	require.Contains(t, string(out), `write_file: allow (approval.modes:"write_file"=allow)`)
	require.Contains(t, string(out), "edit_file: elicit (approval.default)")
}

// TestApprovalPythonClient drives approval with the official Python SDK's
// elicitation callback, over stdio and streamable HTTP, with the initialize
// handshake and with the stateless 2026-07-28 protocol.
func TestApprovalPythonClient(t *testing.T) {
	py := testenv.Need(t, "TOOLWARDEN_TEST_PYTHON")[0] // scripts/test sets it up
	script, err := filepath.Abs("../scripts/pyclient/approval_check.py")
	require.NoError(t, err)
	ws, env := workspace(t)
	env = append(env, "TOOLWARDEN_APPROVAL_TIMEOUT=2s")
	run := func(args ...string) map[string]any {
		cmd := exec.Command(py, append([]string{script}, args...)...)
		cmd.Env = env
		out, err := cmd.Output()
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		require.NoError(t, err, string(stderr))
		var summary map[string]any
		require.NoError(t, json.Unmarshal(out, &summary), string(out))
		for _, check := range []string{"accepted", "declined", "timeout", "unavailable", "changed_asked_again"} {
			require.Equal(t, true, summary[check], check)
		}
		return summary
	}
	base := startHTTP(t, ws, env)
	for _, mode := range []string{"legacy", "2026-07-28"} {
		t.Run("stdio-"+mode, func(t *testing.T) {
			s := run("stdio", "--cmd", binary, "--workspace", ws, "--mode", mode)
			require.EqualValues(t, 1, s["identical_asked"])
		})
		t.Run("http-"+mode, func(t *testing.T) {
			s := run("http", "--url", base+"/mcp", "--token", "e2e-token-0123456789", "--workspace", ws, "--mode", mode)
			want := 1
			if mode != "legacy" {
				want = 2 // the stateless protocol has no session to remember it for
			}
			require.EqualValues(t, want, s["identical_asked"])
		})
	}
	if !t.Failed() {
		observe(t, pythonSDK, pythonSDKVersion(t), "elicitation",
			"✓ accepted, declined, timed out and unavailable each give their result, stdio and streamable HTTP")
	}
}
