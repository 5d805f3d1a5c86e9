package sandbox_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/sandbox"
)

// warmRunners returns runsc keeping 2 sandboxes booted for runs shaped
// like shapes, closed at the end of the test; none without runsc.
func warmRunners(t *testing.T, shapes ...sandbox.Request) []sandbox.Runner {
	t.Helper()
	r, err := sandbox.Detect(context.Background(), sandbox.DetectOptions{Backend: "runsc", StateDir: filepath.Join(stateDir, "runsc")})
	if err != nil {
		if testenv.Strict() {
			t.Fatalf("runsc: %v (scripts/sandbox-setup should have installed it)", err)
		}
		t.Logf("skipping warm runsc: %v", err)
		return nil
	}
	if len(shapes) == 0 {
		shapes = []sandbox.Request{{}}
	}
	require.NoError(t, r.(sandbox.Warmer).Warm(2, shapes...))
	t.Cleanup(func() { require.NoError(t, r.(io.Closer).Close()) })
	return []sandbox.Runner{r}
}

func warmRunner(t *testing.T, shapes ...sandbox.Request) sandbox.Runner {
	t.Helper()
	rs := warmRunners(t, shapes...)
	if len(rs) == 0 {
		t.Skip("no runsc")
	}
	return rs[0]
}

// A warm run sees the same sandbox as a cold one: user, capabilities,
// process 1, its environment, mounts, limits, working directory.
func TestWarmRunIsolationIsTheColdOnes(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "data.txt"), []byte("data\n"), 0o644))
	cold := runners(t)[0]
	if !strings.HasPrefix(cold.Name(), "runsc") {
		t.Skip("no runsc")
	}
	warm := warmRunner(t, sandbox.Request{Workspace: ws})
	probe := `id; pwd; hostname; umask; ulimit -a; ulimit -Ha; cat /proc/self/status | grep -E '^(Cap|NoNewPrivs|Seccomp)'; ` +
		`echo "pid $$"; tr '\0' ' ' < /proc/1/cmdline; echo; tr '\0' '\n' < /proc/1/environ | sort; ` +
		`sort /proc/mounts | sed 's/size=[0-9]*k/size=N/'; ls -la / /run/toolwarden /workspace; cat /run/toolwarden/f; ls /proc | grep -c '^[0-9]'; cat -`
	req := sandbox.Request{Argv: bash(probe), Env: []string{"PATH=/usr/bin", "X=a\nb"}, Workspace: ws,
		Files: map[string][]byte{"f": []byte("file\n")}, Stdin: []byte("stdin\n")}
	want := run(t, cold, req)
	before := warm.(sandbox.Warmer).WarmStats().Warm
	got := run(t, warm, req)
	require.Equal(t, before+1, warm.(sandbox.Warmer).WarmStats().Warm, "the run took a warm sandbox")
	require.Equal(t, 0, want.ExitCode, string(want.Stderr))
	require.Equal(t, string(want.Stdout), string(got.Stdout))
	require.Equal(t, string(want.Stderr), string(got.Stderr))
	require.Equal(t, want.ExitCode, got.ExitCode)
}

// Each run gets a fresh sandbox: what one run leaves in /tmp or in its
// processes is gone in the next, and no sandbox is used twice.
func TestWarmSandboxIsNeverReused(t *testing.T) {
	r := warmRunner(t)
	stats := func() sandbox.WarmStats { return r.(sandbox.Warmer).WarmStats() }
	before := stats()
	res := run(t, r, sandbox.Request{Argv: bash("echo secret > /tmp/mark; /usr/bin/sleep 1000 & echo started")})
	require.Equal(t, "started\n", string(res.Stdout), string(res.Stderr))
	for i := range 4 {
		res := run(t, r, sandbox.Request{Argv: bash("ls -A /tmp; pgrep -c sleep; echo run")})
		require.Equal(t, "0\nrun\n", string(res.Stdout), "run %d: %s", i, res.Stderr)
	}
	require.Equal(t, before.Warm+5, stats().Warm, "every run took a warm sandbox")
	require.LessOrEqual(t, stats().Idle, 2, "the pool stays bounded")
}

// A cancelled or timed-out warm run is killed and removed like a cold one;
// closing the pool leaves nothing either.
func TestWarmStopLeavesNothing(t *testing.T) {
	ws := t.TempDir()
	if os.Geteuid() == 0 {
		require.NoError(t, os.Chmod(ws, 0o777))
	}
	shape := sandbox.Request{Workspace: ws, WorkspaceWritable: true}
	r := warmRunner(t, shape)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan sandbox.Result, 1)
	go func() {
		req := shape
		req.Argv, req.Env = bash("echo before; : > started; exec /usr/bin/sleep 1000"), []string{"PATH=/usr/bin"}
		res, err := r.Run(ctx, req)
		require.NoError(t, err)
		done <- res
	}()
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(ws, "started"))
		return err == nil
	}, 15*time.Second, 50*time.Millisecond)
	cancel()
	res := <-done
	require.Equal(t, sandbox.LimitCanceled, res.Limit)
	require.Equal(t, "before\n", string(res.Stdout))

	req := shape
	req.Argv, req.Env, req.Limits = bash("echo before; exec /usr/bin/sleep 1000"), []string{"PATH=/usr/bin"}, sandbox.Limits{Timeout: 2 * time.Second}
	res = run(t, r, req)
	require.Equal(t, sandbox.LimitTimeout, res.Limit)
	require.Equal(t, "before\n", string(res.Stdout))
	require.Equal(t, 2, r.(sandbox.Warmer).WarmStats().Warm)

	require.NoError(t, r.(io.Closer).Close())
	require.Equal(t, sandbox.WarmStats{}, r.(sandbox.Warmer).WarmStats())
	require.Empty(t, leftovers(t), "no cgroup, run directory, container or runsc process is left")
	require.Empty(t, runscContainers(t, fmt.Sprintf("tw-%d-", os.Getpid())))
}

// runscContainers lists the containers in the test state root named with
// prefix.
func runscContainers(t *testing.T, prefix string) []string {
	t.Helper()
	r := runners(t)[0].(*sandbox.Runsc)
	out, err := exec.Command(r.Path, "--root="+filepath.Join(stateDir, "runsc", "runsc-"+r.Platform, "runsc"), "list", "--quiet").Output()
	require.NoError(t, err)
	var ids []string
	for _, id := range strings.Fields(string(out)) {
		if strings.HasPrefix(id, prefix) {
			ids = append(ids, id)
		}
	}
	return ids
}

// TestWarmCrashLeavesNothing kills a server holding warm sandboxes with
// SIGKILL: its sandboxes end, and the next start removes what is left.
func TestWarmCrashLeavesNothing(t *testing.T) {
	if os.Getenv("TOOLWARDEN_TEST_WARM_CHILD") != "" {
		warmChild()
		return
	}
	testenv.Root(t)
	warmRunner(t) // skips without runsc
	child := exec.Command(os.Args[0], "-test.run", "^TestWarmCrashLeavesNothing$", "-test.count=1")
	child.Env = append(os.Environ(), "TOOLWARDEN_TEST_WARM_CHILD=1")
	stdout, err := child.StdoutPipe()
	require.NoError(t, err)
	child.Stderr = os.Stderr
	require.NoError(t, child.Start())
	defer child.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)
	prefix := fmt.Sprintf("tw-%d-", child.Process.Pid)
	require.Eventually(t, func() bool { return len(runscContainers(t, prefix)) == 2 }, 20*time.Second, 100*time.Millisecond,
		"the child's 2 warm sandboxes are listed")
	require.NoError(t, child.Process.Signal(syscall.SIGKILL))
	_ = child.Wait()

	processes := func() string {
		out, _ := exec.Command("pgrep", "-af", prefix).Output()
		return string(out)
	}
	require.Eventually(t, func() bool { return processes() == "" }, 20*time.Second, 100*time.Millisecond,
		"the dead server's sandboxes end on their own: %s", processes())
	_, err = sandbox.Detect(context.Background(), sandbox.DetectOptions{Backend: "runsc", StateDir: filepath.Join(stateDir, "runsc")})
	require.NoError(t, err)
	require.Empty(t, runscContainers(t, prefix), "the next start deletes the dead server's containers")
	dirs, _ := filepath.Glob(filepath.Join(stateDir, "runsc", "*", "runs", prefix+"*"))
	require.Empty(t, dirs, "and its run directories")
	cgroups, _ := filepath.Glob("/sys/fs/cgroup/*/toolwarden/" + prefix + "*")
	more, _ := filepath.Glob("/sys/fs/cgroup/*/*/*/toolwarden/" + prefix + "*")
	require.Empty(t, append(cgroups, more...), "and its cgroups")
}

// warmChild is the server TestWarmCrashLeavesNothing kills.
func warmChild() {
	r, err := sandbox.Detect(context.Background(), sandbox.DetectOptions{Backend: "runsc", StateDir: filepath.Join(stateDir, "runsc")})
	if err == nil {
		err = r.(sandbox.Warmer).Warm(2, sandbox.Request{})
	}
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("ready")
	select {}
}
