package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit/audittest"
	"github.com/toolwarden/toolwarden/guard"
)

// killCalls is how many write_file calls are in flight when the server is
// killed.
const killCalls = 200

// writeContent is what call i writes: large enough that writes are in
// progress when the kill lands, distinct so a mixed file shows.
func writeContent(i int) string {
	return strings.Repeat(fmt.Sprintf("file %03d line\n", i), 64<<10/14)
}

// TestKillDuringWritesStdio: kill -9 of a stdio server during 200
// concurrent write_file calls leaves no half-written file, its audit log
// verifies, every file on disk has its audit line, and the next start
// removes the interrupted writes' temporary files.
func TestKillDuringWritesStdio(t *testing.T) {
	ws, env := workspace(t)
	require.NoError(t, os.Mkdir(filepath.Join(ws, "out"), 0o755))
	cmd := exec.Command(binary, "serve", "--workspace", ws, "--allow", "write_file", "--approval", "write_file=allow")
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	answers := make(chan struct{}, killCalls+1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			answers <- struct{}{}
		}
	}()
	send := func(v any) {
		line, err := json.Marshal(v)
		require.NoError(t, err)
		_, _ = stdin.Write(append(line, '\n'))
	}
	send(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": mcp.LATEST_PROTOCOL_VERSION, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "fault", "version": "1"}}})
	<-answers
	send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	go func() {
		for i := 1; i <= killCalls; i++ {
			send(map[string]any{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": map[string]any{
				"name": "write_file", "arguments": map[string]any{"path": fmt.Sprintf("out/f%03d.txt", i), "content": writeContent(i)}}})
		}
	}()
	waitAnswers(t, answers, 10)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	checkAfterKill(t, ws, env)
}

// TestKillDuringWritesHTTP is the same over streamable HTTP.
func TestKillDuringWritesHTTP(t *testing.T) {
	ws, env := workspace(t)
	require.NoError(t, os.Mkdir(filepath.Join(ws, "out"), 0o755))
	cmd, base := startHTTPCmd(t, ws, env, "--allow", "write_file", "--approval", "write_file=allow")
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	c, err := client.NewStreamableHttpClient(base+"/mcp",
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer e2e-token-0123456789"}))
	require.NoError(t, err)
	require.NoError(t, c.Start(ctxT(t)))
	defer c.Close()
	initialize(t, c)

	answers := make(chan struct{}, killCalls)
	var wg sync.WaitGroup
	for i := 1; i <= killCalls; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := mcp.CallToolRequest{}
			req.Params.Name = "write_file"
			req.Params.Arguments = map[string]any{"path": fmt.Sprintf("out/f%03d.txt", i), "content": writeContent(i)}
			if res, err := c.CallTool(ctxT(t), req); err == nil && !res.IsError {
				answers <- struct{}{}
			}
		}()
	}
	waitAnswers(t, answers, 10)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	wg.Wait() // the rest fail: the server is gone

	checkAfterKill(t, ws, env)
}

func waitAnswers(t *testing.T, answers <-chan struct{}, n int) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for range n {
		select {
		case <-answers:
		case <-deadline:
			t.Fatalf("fewer than %d answers within 60 s", n)
		}
	}
}

// checkAfterKill: every file is whole, every written file has its audit
// line, the log verifies, and the next start removes the leftovers.
func checkAfterKill(t *testing.T, ws string, env []string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(ws, "out", "f*.txt"))
	require.NotEmpty(t, files, "some writes finished before the kill")
	for _, f := range files {
		var i int
		_, err := fmt.Sscanf(filepath.Base(f), "f%03d.txt", &i)
		require.NoError(t, err)
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		require.Equal(t, writeContent(i), string(data), "%s is whole", f)
	}
	auditPath := envValue(env, "TOOLWARDEN_AUDIT_PATH")
	out, err := exec.Command(binary, "audit", "verify", auditPath).CombinedOutput()
	require.NoError(t, err, "audit verify after kill -9: %s", out)
	allowed := audittest.Count(t, auditPath, "write_file", guard.Allow)
	require.GreaterOrEqual(t, allowed, len(files), "every write on disk has its allowed line")
	t.Logf("killed with %d of %d files written, %d allowed lines, %d temporary files left", len(files), killCalls, allowed, len(tempFiles(t, ws)))

	// The next start removes what the killed server left half-written.
	restart := exec.Command(binary, "serve", "--workspace", ws)
	restart.Env = env
	stdin, err := restart.StdinPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	restart.Stderr = &stderr
	require.NoError(t, restart.Start())
	defer func() { stdin.Close(); _ = restart.Wait() }()
	require.Eventually(t, func() bool { return len(tempFiles(t, ws)) == 0 }, 20*time.Second, 50*time.Millisecond,
		"temporary files left after the next start: %v", tempFiles(t, ws))
}

func tempFiles(t *testing.T, ws string) []string {
	var out []string
	_ = filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".toolwarden-tmp-") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// startHTTPCmd is startHTTP that returns the process, for tests that kill
// it, and passes extra serve flags.
func startHTTPCmd(t *testing.T, ws string, env []string, extra ...string) (*exec.Cmd, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().String()
	ln.Close()
	args := append([]string{"serve", "--workspace", ws, "--http", port}, extra...)
	cmd := exec.Command(binary, args...)
	cmd.Env = append(env, "TOOLWARDEN_HTTP_TOKEN=e2e-token-0123456789")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stderr)
	started := false
	for !started && sc.Scan() {
		started = strings.Contains(sc.Text(), "serving HTTP")
	}
	require.True(t, started, "server did not start")
	go func() {
		for sc.Scan() {
		}
	}()
	return cmd, "http://" + port
}
