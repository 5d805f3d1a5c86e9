package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// pendingCap is approval.max_pending.per_identity's default.
const pendingCap = 8

// TestApprovalPendingCapHTTP replays the attack of issue 41 (item 3): one
// bearer token sends 150 concurrent 512 KiB write_file calls to a server
// that asks on the page only. Without a cap every call waited, holding its
// arguments, and the server grew to ~2 GiB. Now the calls past the
// per-identity cap are refused at once with limit.exceeded, exactly the
// cap waits on the page, the server's RSS comes under 200 MiB, and a slot freed
// by a cancelled call is taken by the next call.
func TestApprovalPendingCapHTTP(t *testing.T) {
	t.Parallel()
	const calls, argBytes = 150, 512 << 10
	ws, env := workspace(t)
	cfg := filepath.Join(t.TempDir(), "toolwarden.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("approval:\n  channel: [page]\n  timeout: 10m\n"), 0o644))
	// At Go's default collector target, as TestSoakHTTP, the RSS shows
	// what is live rather than serverGCPercent's headroom for garbage.
	env = append(withoutGOGC(env), "GOGC=100")
	pid, base, pageURL := startPageHTTP(t, ws, env, "--config", cfg)
	c := pendingClient(t, base)

	t.Logf("server RSS before the calls: %d MiB", procKB(t, pid, "VmRSS")>>10)
	// The calls within the cap wait until the test cancels them.
	ctx, cancel := context.WithCancel(context.Background())
	codes := make(chan string, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes <- writeCode(ctx, c, fmt.Sprintf("big/%03d.txt", i), bigContent(i, argBytes))
		}()
	}
	t.Cleanup(func() { cancel(); wg.Wait() })

	refused := 0
	deadline := time.After(90 * time.Second)
	for refused < calls-pendingCap {
		select {
		case code := <-codes:
			require.Equal(t, string(toolerr.LimitExceeded), code, "a call past the cap is refused, no other way")
			refused++
		case <-deadline:
			t.Fatalf("only %d of the %d calls past approval.max_pending were refused at once (RSS %d MiB)",
				refused, calls-pendingCap, procKB(t, pid, "VmRSS")>>10)
		}
	}
	hc, pageBase := pageSession(t, pageURL)
	require.Eventually(t, func() bool { return len(pageIDs(t, hc, pageBase)) == pendingCap }, 30*time.Second, 50*time.Millisecond,
		"exactly the cap waits on the page")
	// The burst's garbage is collected soon after; what stays is what
	// the waiting calls hold.
	rss := procKB(t, pid, "VmRSS")
	for settle := time.Now().Add(30 * time.Second); rss >= 200<<10 && time.Now().Before(settle); rss = procKB(t, pid, "VmRSS") {
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%d calls of %d KiB: %d refused at once, %d waiting; server RSS %d MiB, peak during the burst %d MiB",
		calls, argBytes>>10, refused, pendingCap, rss>>10, procKB(t, pid, "VmHWM")>>10)
	// The issue asks for under 200 MiB or the calls past the cap refused
	// at once; the refusals are asserted above. The RSS settles at
	// 120-170 MiB on a quiet machine, but when the kernel gets pages back
	// depends on the scavenger and the load, so the bound here only
	// catches memory held per waiting call again (the attack reached
	// 2 GiB); the figure is logged for the note.
	require.Less(t, rss>>10, 400, "the server's RSS (MiB) with the cap waiting")

	audit := auditText(t, auditPathOf(t, env))
	require.Equal(t, calls-pendingCap, strings.Count(audit, `"rule":"approval.max_pending.per_identity"`),
		"each refusal is audited under its rule")

	// A cancelled call frees its slot: the next call waits instead of
	// being refused.
	cancel()
	wg.Wait()
	require.Eventually(t, func() bool { return len(pageIDs(t, hc, pageBase)) == 0 }, 30*time.Second, 50*time.Millisecond)
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	next := make(chan string, 1)
	go func() { next <- writeCode(ctx2, c, "big/next.txt", "small\n") }()
	require.Eventually(t, func() bool { return len(pageIDs(t, hc, pageBase)) == 1 }, 30*time.Second, 50*time.Millisecond,
		"a freed slot is taken by the next call")
	cancel2()
	<-next
}

// startPageHTTP runs `toolwarden serve --http` with args and returns its
// PID, its base URL and the approval page's one-time URL. The server is
// stopped when the test ends.
func startPageHTTP(t *testing.T, ws string, env []string, args ...string) (pid int, base, pageURL string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(binary, append([]string{"serve", "--workspace", ws, "--http", addr}, args...)...)
	cmd.Env = append(env, "TOOLWARDEN_HTTP_TOKEN=e2e-token-0123456789")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	// A server that never prints what is awaited is killed, ending the scan.
	stop := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() })
	defer stop.Stop()
	sc := bufio.NewScanner(stderr)
	for (pageURL == "" || base == "") && sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "http://127.0.0.1:"):
			pageURL = line
		case strings.Contains(line, "serving HTTP"):
			base = "http://" + addr
		}
	}
	require.NotEmpty(t, pageURL, "serve printed the approval page's URL")
	require.NotEmpty(t, base, "serve started")
	go func() {
		for sc.Scan() {
		}
	}()
	return cmd.Process.Pid, base, pageURL
}

// pendingClient connects over streamable HTTP with the test token,
// without elicitation, so that every approval waits on the page.
func pendingClient(t *testing.T, base string) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(base+"/mcp",
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer e2e-token-0123456789"}))
	require.NoError(t, err)
	return connectAs(t, client.NewClient(tr), legacyProtocol)
}

// writeCode calls write_file and returns its error code ("" when it ran,
// "cancelled" when ctx ended first).
func writeCode(ctx context.Context, c *client.Client, path, content string) string {
	req := mcp.CallToolRequest{}
	req.Params.Name = "write_file"
	req.Params.Arguments = map[string]any{"path": path, "content": content, "create_dirs": true}
	res, err := c.CallTool(ctx, req)
	switch {
	case err != nil:
		return "cancelled"
	case !res.IsError:
		return ""
	}
	return string(toolerr.ErrorCode(res))
}

// bigContent is n bytes of text lines, different for each i.
func bigContent(i, n int) string {
	line := fmt.Sprintf("%03d %s\n", i, strings.Repeat("x", 59))
	return strings.Repeat(line, n/len(line)+1)[:n]
}

// pageIDs lists the approval IDs the page shows.
func pageIDs(t *testing.T, hc *http.Client, base string) []string {
	t.Helper()
	res, err := hc.Get(base)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	var ids []string
	for _, m := range hiddenField.FindAllStringSubmatch(string(body), -1) {
		if m[1] == "id" && m[2] != "" && !slices.Contains(ids, m[2]) {
			ids = append(ids, m[2])
		}
	}
	return ids
}

// procKB reads a memory figure of /proc/PID/status, in KiB: VmRSS (the
// resident memory now) or VmHWM (its peak so far).
func procKB(t *testing.T, pid int, field string) int {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field+":" {
			kb, err := strconv.Atoi(f[1])
			require.NoError(t, err)
			return kb
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
