package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	fake "github.com/toolwarden/toolwarden/internal/llmfake/anthropic"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/sandbox"
)

// No `toolwarden serve` outlives the client that started it, nor do its
// upstream servers: a client that opens a subscriptions/listen (Claude
// Code) once had the server wait for it after the end of input, up to the
// drain limit, ten minutes, with its sandboxed upstream (b446f25).

// outliveMark finds the processes one test's toolwarden started.
type outliveMark struct {
	// ws is the test's workspace, in the command line of toolwarden
	// (--workspace), of the client's wrapper script, and of bwrap (--bind).
	ws string
	// entry is the environment entry the upstream gets from toolwarden
	// (env: {OUTLIVE_MARK_env: outliveMarkEnv}), bwrap passing it on.
	entry string
}

// outliveMarkEnv is toolwarden's variable that the upstream's
// OUTLIVE_MARK is read from (the *_env indirection: an upstream gets none
// of toolwarden's environment otherwise).
const outliveMarkEnv = "TOOLWARDEN_TEST_OUTLIVE_MARK"

// outliveSetup is a workspace for server-filesystem sandboxed under
// bubblewrap, its config (the upstream "files" holding the mark in its
// environment) and the mark.
func outliveSetup(t *testing.T) (ws string, env []string, config string, m outliveMark) {
	t.Helper()
	bin, prefix := filesystemServer(t)
	ws, env = workspace(t)
	random := make([]byte, 12)
	_, _ = rand.Read(random)
	token := hex.EncodeToString(random)
	env = append(env, "TOOLWARDEN_EXEC_BACKEND=bwrap", outliveMarkEnv+"="+token)
	config = filesystemConfig(bin, prefix, sandbox.WorkspaceDir, "    env: {OUTLIVE_MARK_env: "+outliveMarkEnv+"}\n")
	return ws, env, config, outliveMark{ws: ws, entry: "OUTLIVE_MARK=" + token}
}

// process is one process as /proc shows it; pid and start (clock ticks
// after boot) together name it, as a pid alone may be reused.
type process struct {
	pid     int
	start   uint64
	cmdline string
	// upstream is set when the mark is in its environment.
	upstream bool
}

// userHZ is the unit of /proc's start times (USER_HZ, 100 on Linux).
const userHZ = 100

// age is how long p has been running.
func (p process) age() time.Duration {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	up, _ := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	return time.Duration((up - float64(p.start)/userHZ) * float64(time.Second)).Round(100 * time.Millisecond)
}

func (p process) String() string {
	return fmt.Sprintf("pid %d, up %v: %s", p.pid, p.age(), p.cmdline)
}

// procStart returns pid's start time, and false if it is gone or a zombie
// (it has ended; only its exit status is left for its parent).
func procStart(pid int) (uint64, bool) {
	p, _, ok := statProc(pid) // upstreamrootless_test.go
	if !ok || p.state == "Z" || p.state == "X" {
		return 0, false
	}
	start, err := strconv.ParseUint(p.start, 10, 64)
	return start, err == nil
}

// marked lists the running processes carrying m: the workspace in their
// command line, or the entry in their environment.
func (m outliveMark) marked() []process {
	dirs, _ := os.ReadDir("/proc")
	var found []process
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		raw, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		cmdline := strings.TrimSpace(string(bytes.ReplaceAll(raw, []byte{0}, []byte{' '})))
		environ, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		upstream := false
		for _, kv := range bytes.Split(environ, []byte{0}) {
			upstream = upstream || string(kv) == m.entry
		}
		if !upstream && !strings.Contains(cmdline, m.ws) {
			continue
		}
		if start, ok := procStart(pid); ok {
			found = append(found, process{pid: pid, start: start, cmdline: cmdline, upstream: upstream})
		}
	}
	return found
}

// watch samples the marked processes every 100 ms until the returned
// function is called (or the test ends), which returns all it saw.
func (m outliveMark) watch(t *testing.T) (stop func() []process) {
	done := make(chan struct{})
	var (
		wg   sync.WaitGroup
		seen = map[[2]uint64]process{}
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			for _, p := range m.marked() {
				seen[[2]uint64{uint64(p.pid), p.start}] = p
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	stop = func() []process {
		once.Do(func() { close(done) })
		wg.Wait()
		var all []process
		for _, p := range seen {
			all = append(all, p)
		}
		return all
	}
	t.Cleanup(func() { stop() })
	return stop
}

// requireSeen asserts that the watch found toolwarden and its upstream
// while the client ran: else the mark finds nothing and the test that
// they are gone would prove nothing.
func requireSeen(t *testing.T, seen []process) {
	t.Helper()
	var server, upstream bool
	for _, p := range seen {
		server = server || strings.HasPrefix(p.cmdline, binary+" serve ")
		upstream = upstream || (p.upstream && strings.Contains(p.cmdline, "mcp-server-filesystem"))
	}
	require.True(t, server, "toolwarden was not seen running: %v", seen)
	require.True(t, upstream, "the upstream was not seen running: %v", seen)
}

// requireGone waits (60 s at most, looking every 200 ms) until none of
// the processes seen and none carrying m is left, and fails listing those
// left, which are then killed.
func requireGone(t *testing.T, m outliveMark, seen []process) {
	t.Helper()
	var left []process
	deadline := time.Now().Add(60 * time.Second)
	for {
		left = m.marked()
		for _, p := range seen {
			if start, ok := procStart(p.pid); ok && start == p.start && !slices.ContainsFunc(left, p.same) {
				left = append(left, p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(left) == 0 {
		return
	}
	var lines []string
	for _, p := range left {
		lines = append(lines, p.String())
	}
	t.Cleanup(func() {
		for _, p := range left {
			if start, ok := procStart(p.pid); ok && start == p.start {
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
			}
		}
	})
	t.Fatalf("%d processes this test's toolwarden started outlived the client by 60 s:\n%s", len(left), strings.Join(lines, "\n"))
}

// same reports whether p and q are one process.
func (p process) same(q process) bool { return p.pid == q.pid && p.start == q.start }

// TestClaudeCodeLeavesNoProcess: Claude Code (headless, which opens a
// subscriptions/listen for the session) calls a sandboxed upstream's tool
// through toolwarden and exits; toolwarden and the upstream, which ran
// meanwhile, are gone at once.
func TestClaudeCodeLeavesNoProcess(t *testing.T) {
	testenv.Need(t, "TOOLWARDEN_TEST_CLAUDE_CODE")
	ws, env, config, m := outliveSetup(t)
	stop := m.watch(t)
	res := claudeRun{ws: ws, env: env, serve: serveOpts{config: config}, allowed: []string{"files__read_text_file"}}.run(t,
		[]fake.Block{fake.ToolUse("toolu_1", "mcp__toolwarden__files__read_text_file", map[string]any{"path": sandbox.WorkspaceDir + "/hello.txt"})},
		[]fake.Block{fake.Text("Read the greeting.")})
	seen := stop()

	main := res.fake.Main()
	require.Len(t, main, 2, "prompt, then the tool result")
	read, ok := main[1].ToolResult("toolu_1")
	require.True(t, ok)
	require.False(t, read.IsError, read.Text)
	require.Contains(t, read.Text, "hello from toolwarden", "the upstream's tool ran")
	requireSeen(t, seen)
	requireGone(t, m, seen)
}

// TestTypeScriptSDKLeavesNoProcess: the TypeScript SDK calls a sandboxed
// upstream's tools through toolwarden and closes (its stdin ended, a
// SIGTERM after 2 s, a SIGKILL after 2 s more): toolwarden and the
// upstream are gone.
func TestTypeScriptSDKLeavesNoProcess(t *testing.T) {
	prefix := testenv.Need(t, "TOOLWARDEN_TEST_TS_SDK")[0]
	node := needNode(t)
	script, err := filepath.Abs("../scripts/clients/tsclient/upstream.cjs")
	require.NoError(t, err)
	ws, env, config, m := outliveSetup(t)
	file := upstreamConfig(t, ws, config)
	stop := m.watch(t)
	cmd := exec.CommandContext(ctxT(t), node, script, prefix, binary, ws, file,
		"files__read_text_file", `{"path":"`+sandbox.WorkspaceDir+`/hello.txt"}`,
		"files__list_directory", `{"path":"`+sandbox.WorkspaceDir+`"}`)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	seen := stop()

	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var sum tsUpstreamSummary
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &sum), stdout.String())
	require.False(t, sum.Read.IsError, sum.Read.Text)
	require.Contains(t, sum.Read.Text, "hello from toolwarden", "the upstream's tool ran")
	require.False(t, sum.Write.IsError, sum.Write.Text) // the second call: list_directory
	require.Contains(t, sum.Write.Text, "hello.txt")
	requireSeen(t, seen)
	requireGone(t, m, seen)
}
