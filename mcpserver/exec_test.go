package mcpserver_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/mcpserver"
	"github.com/toolwarden/toolwarden/sandbox"
	texec "github.com/toolwarden/toolwarden/tools/exec"
)

// execStateDir is shared by the tests: runsc keeps a network-namespace
// mount in its root that outlives a t.TempDir.
var execStateDir = filepath.Join(os.TempDir(), "toolwarden-test-sandbox", "mcpserver")

// withExec turns the exec toolset on in f, with a run_command allowlist.
func withExec(t testing.TB, f *fixture) {
	t.Helper()
	f.cfg.Exec.Interpreters = configs.Interpreters
	f.cfg.Exec.Commands = []configs.Command{{Name: "list_workspace", Description: "List a workspace directory.",
		Argv: []string{"/usr/bin/ls", "-1", "--"}, MaxArgs: 1}}
	f.cfg.Policy.Allow = append(f.cfg.Policy.Allow, "run_script", "run_command")
}

// execServer connects a client to a server with the exec tools, failing
// under scripts/test when no sandbox works.
func execServer(t testing.TB) (*fixture, *client.Client) {
	t.Helper()
	testenv.Root(t)
	return execServerOn(t, "auto")
}

// execServerOn is execServer on one backend, as root or rootless; each of
// opts changes the fixture's config first.
func execServerOn(t testing.TB, backend string, opts ...func(*configs.Config)) (*fixture, *client.Client) {
	t.Helper()
	f := newFixture(t)
	withExec(t, f)
	f.cfg.Exec.Backend = backend
	for _, o := range opts {
		o(&f.cfg)
	}
	requireSandbox(t, backend)
	b := f.server(t)
	c, err := client.NewInProcessClient(b.MCP())
	require.NoError(t, err)
	connect(t, c)
	return f, c
}

// sandboxes remembers, per backend, why none works ("" when one does):
// a serving server finds its backend only at the first run.
var sandboxes sync.Map

// requireSandbox stops t (a failure under scripts/test) when no sandbox
// of backend works on this machine.
func requireSandbox(t testing.TB, backend string) {
	t.Helper()
	why, ok := sandboxes.Load(backend)
	if !ok {
		why = ""
		r, err := sandbox.Detect(context.Background(), sandbox.DetectOptions{Backend: backend, StateDir: execStateDir})
		if err != nil {
			why = err.Error()
		} else if c, ok := r.(io.Closer); ok {
			c.Close()
		}
		sandboxes.Store(backend, why)
	}
	if why != "" {
		testenv.Missing(t, "exec unavailable: %s", why)
	}
}

func TestRunScriptThroughMCP(t *testing.T) {
	_, c := execServer(t)
	var out texec.RunOut
	structured(t, callTool(t, c, "run_script", map[string]any{"interpreter": "python",
		"script": "import sys\nprint(sum(map(int, sys.argv[1:])))\nprint(open('hello.txt').read().strip())", "args": []string{"2", "3"}}), &out)
	require.Equal(t, "5\nhello from toolwarden\n", out.Stdout)
	require.Equal(t, 0, out.ExitCode)

	structured(t, callTool(t, c, "run_script", map[string]any{"interpreter": "bash", "script": "echo oops >&2; exit 3"}), &out)
	require.Equal(t, 3, out.ExitCode, "a failing script is a normal result")
	require.Equal(t, "oops\n", out.Stderr)

	res := callTool(t, c, "run_script", map[string]any{"interpreter": "python; rm -rf /", "script": "print(1)"})
	require.Equal(t, toolerr.InvalidSchema, errorOf(t, res).Code, "the schema's enum refuses it before the handler")

	structured(t, callTool(t, c, "run_command", map[string]any{"command": "list_workspace", "args": []string{"src"}}), &out)
	require.Equal(t, "main.go\n", out.Stdout)
	res = callTool(t, c, "run_command", map[string]any{"command": "list_workspace", "args": []string{"--output=/tmp/x"}})
	require.Equal(t, toolerr.FlagNotAllowed, errorOf(t, res).Code)
}

func TestRunGoScriptThroughMCP(t *testing.T) {
	_, c := execServer(t)
	goRoot, err := exec.Command("go", "env", "GOROOT").Output()
	require.NoError(t, err)
	root := strings.TrimSpace(string(goRoot))
	// Prepare the shared cache once per machine, as the server would.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	require.NoError(t, texec.NewGoCache(mcpserver.GoCacheDir(configs.Exec{}, root), root).Prepare(ctx))

	var out texec.RunOut
	structured(t, callTool(t, c, "run_script", map[string]any{"interpreter": "go",
		"script": "package main\nimport (\"fmt\"; \"os\")\nfunc main() { fmt.Println(\"args:\", os.Args[1:]) }", "args": []string{"x.go", "y"}}), &out)
	require.Equal(t, 0, out.ExitCode, out.Stderr)
	require.Equal(t, "args: [x.go y]\n", out.Stdout, "an argument ending in .go is an argument, not a source file")
}

// TestRunGoScriptOnColdCache: the first go script on a machine, while the
// server is still preparing Go's build cache, gets a clear tool error to
// retry (or waits for it), never a linker error from compiling the
// standard library inside its small scratch space.
func TestRunGoScriptOnColdCache(t *testing.T) {
	testenv.Root(t)
	f := newFixture(t)
	withExec(t, f)
	cache := filepath.Join(t.TempDir(), "gocache")
	f.cfg.Exec.GoCache = cache
	b := f.server(t)
	c, err := client.NewInProcessClient(b.MCP())
	require.NoError(t, err)
	connect(t, c)

	res := callTool(t, c, "run_script", map[string]any{"interpreter": "go", "timeout_seconds": 2,
		"script": "package main\nfunc main() { println(1) }"})
	e := errorOf(t, res)
	require.Equal(t, toolerr.BackendUnavailable, e.Code, e.Message)
	require.Equal(t, "exec.go_cache", e.Rule)
	require.Contains(t, e.Message, "still being prepared")
	require.NoFileExists(t, filepath.Join(cache, "toolwarden-ready"), "nothing half-built is mounted")
}

// A server keeps sandboxes booted ahead (exec.warm_pool), through the
// wrappers that trace and count runs, once a client is offered the exec
// tools, and a run takes one of them.
func TestRunScriptTakesAWarmSandbox(t *testing.T) {
	testenv.Root(t)
	f := newFixture(t)
	withExec(t, f)
	f.cfg.Exec.Backend, f.cfg.Exec.WarmPool = "runsc", 2
	requireSandbox(t, "runsc")
	b := f.server(t)
	c, err := client.NewInProcessClient(b.MCP())
	require.NoError(t, err)
	connect(t, c)
	idle := func() []string {
		dirs, _ := filepath.Glob(filepath.Join(execStateDir, "runsc-*", "runs", fmt.Sprintf("tw-%d-*", os.Getpid())))
		return dirs
	}
	_, err = b.SurfaceDigest(ctxT(t))
	require.NoError(t, err)
	require.Empty(t, idle(), "none is booted before a client is offered run_script")
	_, err = c.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(idle()) == 2 }, 20*time.Second, 50*time.Millisecond, "2 sandboxes are booted ahead")
	before := idle()
	var out texec.RunOut
	structured(t, callTool(t, c, "run_script", map[string]any{"interpreter": "python", "script": "print('warm')"}), &out)
	require.Equal(t, "warm\n", out.Stdout, out.Stderr)
	after := idle()
	kept := 0
	for _, d := range before {
		if slices.Contains(after, d) {
			kept++
		}
	}
	require.Equal(t, 1, kept, "the run took one of the sandboxes booted ahead, which is gone: before %v, after %v", before, after)
}

func TestRunScriptProgressAndCancel(t *testing.T) {
	testenv.Root(t)
	// Sandboxes booted ahead for later runs would match the prefix below:
	// this test runs cold; sandbox.TestWarmStopLeavesNothing cancels a
	// warm run.
	_, c := execServerOn(t, "auto", func(c *configs.Config) { c.Exec.WarmPool = 0 })
	var mu sync.Mutex
	var progress []mcp.JSONRPCNotification
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			mu.Lock()
			progress = append(progress, n)
			mu.Unlock()
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = "run_script"
	req.Params.Arguments = map[string]any{"interpreter": "bash", "script": "sleep 1000"}
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok-1"}
	done := make(chan error, 1)
	go func() { _, err := c.CallTool(ctx, req); done <- err }()
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(progress) > 0 }, 20*time.Second, 50*time.Millisecond,
		"a long run reports progress")
	mu.Lock()
	require.Equal(t, "tok-1", progress[0].Params.AdditionalFields["progressToken"])
	mu.Unlock()
	cancel()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the call did not end after cancel")
	}
	prefix := fmt.Sprintf("tw-%d-", os.Getpid())
	require.Eventually(t, func() bool {
		out, _ := exec.Command("pgrep", "-f", prefix).Output()
		cgs, _ := filepath.Glob("/sys/fs/cgroup/*/toolwarden/" + prefix + "*")
		return len(out) == 0 && len(cgs) == 0
	}, 15*time.Second, 100*time.Millisecond, "no sandbox process or cgroup is left after cancel")
}
