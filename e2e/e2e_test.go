package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit/audittest"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/mcpserver"
)

// toolwardenPkg is the command under test.
const toolwardenPkg = "github.com/toolwarden/toolwarden/cmd/toolwarden"

// binary is the toolwarden binary built once for the end-to-end tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "toolwarden-e2e-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "toolwarden")
	// Without VCS stamping, whatever GOFLAGS says: its version is "dev"
	// in every clone and run, so what the tests compare with committed
	// results (the gauntlet's tool_version) does not turn on the machine's
	// Go settings, nor on the tree being clean.
	out, err := exec.Command("go", "build", "-buildvcs=false", "-o", binary, toolwardenPkg).CombinedOutput()
	if err != nil {
		panic("building toolwarden: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	if code == 0 && *updateClients {
		if err := writeObservations(); err != nil {
			fmt.Fprintln(os.Stderr, "recording client observations:", err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

const secret = "TOP-SECRET-OUTSIDE-WORKSPACE"

// workspace makes parent/ws with hello.txt, and a secret beside it.
func workspace(t *testing.T) (ws string, env []string) {
	t.Helper()
	parent := t.TempDir()
	ws = filepath.Join(parent, "ws")
	require.NoError(t, os.MkdirAll(ws, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hello from toolwarden\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(parent, "outside.txt"), []byte(secret), 0o644))
	env = append(cleanEnv(), "TOOLWARDEN_AUDIT_PATH="+filepath.Join(parent, "audit.jsonl"), "HOME="+parent)
	// The sandbox state (runsc keeps a mount in it) and the prepared
	// GOCACHE are machine-wide, not per test.
	env = append(env, "TOOLWARDEN_EXEC_STATE_DIR="+filepath.Join(os.TempDir(), "toolwarden-test-sandbox", "e2e"),
		"TOOLWARDEN_EXEC_GO_CACHE="+sharedGoCache)
	return ws, env
}

// sharedGoCache is the GOCACHE the server would prepare for the real user.
var sharedGoCache = func() string {
	root, _ := exec.Command("go", "env", "GOROOT").Output()
	return mcpserver.GoCacheDir(configs.Exec{}, strings.TrimSpace(string(root)))
}()

// cleanEnv is the environment without any TOOLWARDEN_ settings.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TOOLWARDEN_") {
			env = append(env, kv)
		}
	}
	return env
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

// auditPathOf is the audit log of the server run with env.
func auditPathOf(t *testing.T, env []string) string {
	t.Helper()
	p := envValue(env, "TOOLWARDEN_AUDIT_PATH")
	if p == "" {
		t.Fatal("no audit path in env")
	}
	return p
}

// auditText is the audit log at path as text, its lines joined; a missing
// log is empty.
func auditText(t *testing.T, path string) string {
	t.Helper()
	return strings.Join(audittest.Lines(t, path), "\n")
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func initialize(t *testing.T, c *client.Client) {
	t.Helper()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "e2e", Version: "1"}
	_, err := c.Initialize(ctxT(t), init)
	require.NoError(t, err)
}

func readHello(t *testing.T, c *client.Client) {
	t.Helper()
	list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err)
	require.Len(t, list.Tools, 12, "the read-only file tools, and the writes behind approval")
	req := mcp.CallToolRequest{}
	req.Params.Name = "read_file"
	req.Params.Arguments = map[string]any{"path": "hello.txt"}
	res, err := c.CallTool(ctxT(t), req)
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.Contains(t, res.Content[0].(mcp.TextContent).Text, "hello from toolwarden")
	req.Params.Arguments = map[string]any{"path": "../outside.txt"}
	res, err = c.CallTool(ctxT(t), req)
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.NotContains(t, res.Content[0].(mcp.TextContent).Text, secret)
	e, ok := toolerr.FromResult(res)
	require.True(t, ok, "the error's fields arrive under _meta")
	require.Equal(t, toolerr.PathOutsideWorkspace, e.Code)
	require.NotEmpty(t, e.Hint)
	require.Equal(t, e.Text(), res.Content[0].(mcp.TextContent).Text)
}

// mcpGo names mcp-go in the client table.
const mcpGo = "mcp-go (Go client)"

// mcpGoVersion is the mcp-go version this test binary is built with.
// A test binary's build information may list no dependencies; the
// module's requirement, which built it, then says.
func mcpGoVersion() string {
	const mod = "github.com/mark3labs/mcp-go"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == mod {
				return d.Version
			}
		}
	}
	if out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", mod).Output(); err == nil {
		return strings.TrimSpace(string(out))
	}
	return "unknown"
}

func TestStdioBinary(t *testing.T) {
	ws, env := workspace(t)
	c, err := client.NewStdioMCPClient(binary, env, "serve", "--workspace", ws)
	require.NoError(t, err)
	defer c.Close()
	initialize(t, c)
	readHello(t, c)
	observe(t, mcpGo, mcpGoVersion(), "tools", "✓ all 12 listed")
	observeProtocol(t, mcpGo, mcpGoVersion(), "stdio", []string{c.ProtocolVersion()})
	observe(t, mcpGo, mcpGoVersion(), "errors", "✓ path escape: code+hint in text and `_meta`")
}

// startHTTP runs `toolwarden serve --http` on a free loopback port, and
// checks that it shuts down gracefully when the test ends.
func startHTTP(t *testing.T, ws string, env []string) string {
	t.Helper()
	cmd, base := startHTTPCmd(t, ws, env)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			require.NoError(t, err, "graceful shutdown exits 0")
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("server did not shut down within 10s")
		}
	})
	return base
}

func TestHTTPBinary(t *testing.T) {
	ws, env := workspace(t)
	base := startHTTP(t, ws, env)
	headers := map[string]string{"Authorization": "Bearer e2e-token-0123456789"}
	streamable, err := client.NewStreamableHttpClient(base+"/mcp", transport.WithHTTPHeaders(headers))
	require.NoError(t, err)
	sse, err := client.NewSSEMCPClient(base+"/sse", transport.WithHeaders(headers))
	require.NoError(t, err)
	var revisions []string
	for name, c := range map[string]*client.Client{"streamable": streamable, "sse": sse} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, c.Start(ctxT(t)))
			defer c.Close()
			initialize(t, c)
			readHello(t, c)
			revisions = append(revisions, c.ProtocolVersion())
		})
	}
	if !t.Failed() {
		observe(t, mcpGo, mcpGoVersion(), "HTTP", "✓ streamable HTTP and SSE, bearer token")
		observeProtocol(t, mcpGo, mcpGoVersion(), "HTTP", revisions)
	}
}

func TestHTTPBinaryRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	cmd := exec.Command(binary, "serve", "--workspace", ws, "--http", "0.0.0.0:0")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "flag --http: http.addr")
	require.Contains(t, string(out), "allow_remote")
}

// TestPythonClient drives the server with the official Python MCP SDK,
// a client nobody here wrote. scripts/test provides the interpreter.
func TestPythonClient(t *testing.T) {
	py := testenv.Need(t, "TOOLWARDEN_TEST_PYTHON")[0] // scripts/test sets it up
	script, err := filepath.Abs("../scripts/pyclient/client_check.py")
	require.NoError(t, err)
	ws, env := workspace(t)
	run := func(args ...string) string {
		cmd := exec.Command(py, append([]string{script}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return string(out)
	}
	stdio := run("stdio", "--cmd", binary, "--workspace", ws)
	require.Contains(t, stdio, `"escape_denied": true`)
	base, serverLog := startHTTPLogged(t, ws, env)
	out := run("http", "--url", base+"/mcp", "--token", "e2e-token-0123456789", "--sse-url", base+"/sse")
	require.Contains(t, out, `"transport": "streamable-http"`)
	require.Contains(t, out, `"transport": "sse"`)
	v := pythonSDKVersion(t)
	observe(t, pythonSDK, v, "tools", "✓ listed, read_file schemas present")
	observe(t, pythonSDK, v, "structured output", "✓ read_file passes the SDK's output-schema check")
	observe(t, pythonSDK, v, "errors", "✓ path escape: code+hint in text and `_meta`")
	observe(t, pythonSDK, v, "HTTP", "✓ streamable HTTP and SSE, bearer token")
	// The SDK passes the stdio server's log on to its own stderr.
	observeProtocol(t, pythonSDK, v, "stdio", negotiatedIn(stdio))
	observeProtocol(t, pythonSDK, v, "HTTP", negotiatedIn(serverLog.String()))
}

// pythonSDK names the Python SDK in the client table.
const pythonSDK = "Python SDK (`mcp`)"

// pythonSDKVersion is the mcp version scripts/pyclient pins.
func pythonSDKVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../scripts/pyclient/requirements.txt")
	require.NoError(t, err)
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "mcp=="); ok {
			return v
		}
	}
	t.Fatal("scripts/pyclient/requirements.txt pins no mcp version")
	return ""
}

func TestToolsCommand(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	run := func(args ...string) []mcp.Tool {
		cmd := exec.Command(binary, append([]string{"tools", "--workspace", ws}, args...)...)
		cmd.Env = env
		out, err := cmd.Output()
		require.NoError(t, err)
		var tools []mcp.Tool
		require.NoError(t, json.Unmarshal(out, &tools))
		return tools
	}
	names := func(tools []mcp.Tool) []string {
		var n []string
		for _, tool := range tools {
			n = append(n, tool.Name)
			require.NotEmpty(t, tool.Description)
			require.NotNil(t, tool.Annotations.ReadOnlyHint)
		}
		return n
	}
	require.Len(t, run(), 12)
	require.Contains(t, names(run("--allow", "run_script")), "run_script")
	require.NotContains(t, names(run("--approval", "delete_*=deny")), "delete_file", "a tool in approval mode deny is not offered")
	require.NotContains(t, names(run("--allow", "*", "--deny", "*_file")), "write_file")
	all := names(run("--allow", "*"))
	require.GreaterOrEqual(t, len(all), 12, "every fs tool, plus the toolsets available here")
	require.Contains(t, all, "delete_file")
	if os.Geteuid() == 0 {
		require.Contains(t, all, "run_script", "root can run sandboxes; scripts/test installs the runtimes")
	}
	require.Empty(t, run("--deny", "*"))
}

func TestConfigCheckCommand(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	require.NoError(t, os.WriteFile(good, []byte("workspace: "+ws+"\npolicy:\n  allow: [read_file]\n"), 0o644))
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("limits:\n  max_calls_per_session: -1\n  bogus: 1\n"), 0o644))

	cmd := exec.Command(binary, "config", "check", "--config", good)
	cmd.Env = env
	out, err := cmd.Output()
	require.NoError(t, err)
	require.Contains(t, string(out), "advertised_tools:\n  - read_file\nhidden_tools:")

	cmd = exec.Command(binary, "config", "check", "--config", bad)
	cmd.Env = env
	out, err = cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), bad+":3: limits.bogus: unknown key")

	// No working sandbox: the exec tools are not offered and config check
	// says why; there is no unsandboxed fallback.
	cmd = exec.Command(binary, "config", "check", "--config", good)
	cmd.Env = append(env, "TOOLWARDEN_EXEC_BACKEND=bwrap", "TOOLWARDEN_EXEC_BWRAP_PATH=/nonexistent/bwrap")
	out, err = cmd.Output()
	require.NoError(t, err)
	require.Contains(t, string(out), "unavailable_toolsets:\n  - toolset: exec\n    reason: 'no working sandbox backend:")
	require.NotContains(t, string(out), "- run_script")
}

func TestAuditVerifyCommand(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	c, err := client.NewStdioMCPClient(binary, env, "serve", "--workspace", ws)
	require.NoError(t, err)
	initialize(t, c)
	readHello(t, c)
	c.Close()
	auditPath := filepath.Join(filepath.Dir(ws), "audit.jsonl")
	out, err := exec.Command(binary, "audit", "verify", auditPath).CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "ok: ")

	data, err := os.ReadFile(auditPath)
	require.NoError(t, err)
	tampered := strings.Replace(string(data), `"outcome":"denied"`, `"outcome":"allowed"`, 1)
	require.NotEqual(t, string(data), tampered)
	require.NoError(t, os.WriteFile(auditPath, []byte(tampered), 0o600))
	out, err = exec.Command(binary, "audit", "verify", auditPath).CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "hash mismatch")
}

// TestShippedExamples keeps configs/examples working: the client snippets
// run `toolwarden serve`, and the example config passes `config check`.
func TestShippedExamples(t *testing.T) {
	t.Parallel()
	dir := "../configs/examples"
	for _, name := range []string{"claude_desktop_config.json", "vscode_mcp.json", "gemini_settings.json"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, name))
			require.NoError(t, err)
			type server struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
				HTTPURL string   `json:"httpUrl"`
			}
			var doc struct {
				MCPServers map[string]server `json:"mcpServers"` // Claude Desktop, Gemini CLI
				Servers    map[string]server `json:"servers"`    // VS Code
			}
			require.NoError(t, json.Unmarshal(data, &doc))
			servers := doc.MCPServers
			if servers == nil {
				servers = doc.Servers
			}
			require.Contains(t, servers, "toolwarden")
			require.Equal(t, "toolwarden", servers["toolwarden"].Command)
			require.Equal(t, "serve", servers["toolwarden"].Args[0])
		})
	}
	_, env := workspace(t)
	cmd := exec.Command(binary, "config", "check", "--config", filepath.Join(dir, "toolwarden.yaml"))
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), `approval.modes sets "create_directory" to allow`)
	require.Contains(t, string(out), "approval:\n  create_directory: allow (approval.modes:\"create_directory\"=allow)\n  edit_file: elicit (approval.default)\n")
}

// TestHTTPGeneratedToken: with no token configured, serve prints a random
// one to stderr once, and only that token opens the server.
func TestHTTPGeneratedToken(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(binary, "serve", "--workspace", ws, "--http", addr)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(stderr)
	token := ""
	for sc.Scan() && token == "" {
		if strings.Contains(sc.Text(), "generated bearer token") && sc.Scan() {
			token = strings.TrimSpace(sc.Text())
		}
	}
	require.Len(t, token, 64)
	go func() {
		for sc.Scan() {
		}
	}()
	var c *client.Client
	require.Eventually(t, func() bool {
		c, err = client.NewStreamableHttpClient("http://"+addr+"/mcp",
			transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
		return err == nil && c.Start(ctxT(t)) == nil
	}, 10*time.Second, 50*time.Millisecond)
	defer c.Close()
	initialize(t, c)
	readHello(t, c)
}
