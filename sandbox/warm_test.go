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

// coldRunsc returns a workspace holding data.txt and runsc booting a
// sandbox per run; it skips without runsc.
func coldRunsc(t *testing.T) (string, sandbox.Runner) {
	t.Helper()
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "data.txt"), []byte("data\n"), 0o644))
	cold := runners(t)[0]
	if !strings.HasPrefix(cold.Name(), "runsc") {
		t.Skip("no runsc")
	}
	return ws, cold
}

// requireSameRun fails unless got printed and ended as want.
func requireSameRun(t *testing.T, want, got sandbox.Result) {
	t.Helper()
	require.Equal(t, string(want.Stdout), string(got.Stdout))
	require.Equal(t, string(want.Stderr), string(got.Stderr))
	require.Equal(t, want.ExitCode, got.ExitCode)
}

// A warm run sees the same sandbox as a cold one: user, capabilities,
// process 1, its environment, mounts, limits, working directory.
func TestWarmRunIsolationIsTheColdOnes(t *testing.T) {
	ws, cold := coldRunsc(t)
	probe := `id; pwd; hostname; umask; ulimit -a; ulimit -Ha; cat /proc/self/status | grep -E '^(Cap|NoNewPrivs|Seccomp|Sig(Ign|Blk))'; ` +
		`echo "pid $$"; tr '\0' ' ' < /proc/1/cmdline; echo; tr '\0' '\n' < /proc/1/environ | sort; ` +
		`sort /proc/mounts | sed 's/size=[0-9]*k/size=N/'; ls -la --time-style=+ / /run/toolwarden /workspace; cat /run/toolwarden/f; ls /proc > /tmp/procs; grep -c '^[0-9]' /tmp/procs; cat -`
	req := sandbox.Request{Argv: bash(probe), Env: []string{"PATH=/usr/bin", "X=a\nb"}, Workspace: ws,
		Files: map[string][]byte{"f": []byte("file\n")}, Stdin: []byte("stdin\n")}
	// In a sandbox waiting in warmInit, and in one waiting in the Python
	// stand-by, which a run of bash replaces (its runs set HOME).
	withHome := req
	withHome.Env = append(withHome.Env, "HOME=/home")
	for _, c := range []struct {
		name       string
		shape, req sandbox.Request
	}{{"warmInit", sandbox.Request{Workspace: ws}, req}, {"python stand-by", pyShape(ws), withHome}} {
		t.Run(c.name, func(t *testing.T) {
			warm := warmRunner(t, c.shape)
			want := run(t, cold, c.req)
			before := warm.(sandbox.Warmer).WarmStats().Warm
			got := run(t, warm, c.req)
			require.Equal(t, before+1, warm.(sandbox.Warmer).WarmStats().Warm, "the run took a warm sandbox")
			require.Equal(t, 0, want.ExitCode, string(want.Stderr))
			requireSameRun(t, want, got)
		})
	}
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

// Warm(0) removes the idle sandboxes and leaves none of their containers;
// a later Warm boots the pool again and runs take from it.
func TestWarmZeroEmptiesThePool(t *testing.T) {
	r := warmRunner(t)
	w := r.(sandbox.Warmer)
	require.NoError(t, w.Warm(0))
	require.Equal(t, sandbox.WarmStats{}, w.WarmStats())
	require.Empty(t, runscContainers(t, fmt.Sprintf("tw-%d-", os.Getpid())), "no sandbox of the pool is left")
	res := run(t, r, sandbox.Request{Argv: bash("echo cold")})
	require.Equal(t, "cold\n", string(res.Stdout), string(res.Stderr))

	require.NoError(t, w.Warm(2, sandbox.Request{}))
	require.Equal(t, 2, w.WarmStats().Idle, "booted or booting")
	res = run(t, r, sandbox.Request{Argv: bash("echo warm")})
	require.Equal(t, "warm\n", string(res.Stdout), string(res.Stderr))
	require.Equal(t, 1, w.WarmStats().Warm)
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
		// One sandbox waits in warmInit, one in the Python stand-by.
		err = r.(sandbox.Warmer).Warm(2, sandbox.Request{}, pyShape(os.TempDir()))
	}
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("ready")
	select {}
}

// pyShape is a python script run's shape, as tools/exec declares it: its
// sandboxes start the interpreter ahead (the stand-by).
func pyShape(ws string) sandbox.Request {
	return sandbox.Request{Argv: []string{"/usr/bin/python3", "-I", "-B"}, Env: []string{"PATH=/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8"}, Workspace: ws}
}

// pyRun is a run of script in shape sh, as run_script makes it.
func pyRun(sh sandbox.Request, script, stdin string, args ...string) sandbox.Request {
	req := sh
	req.Argv = append(append(append([]string{}, sh.Argv...), sandbox.FilesDir+"/script.py"), args...)
	req.Files = map[string][]byte{"script.py": []byte(script)}
	req.Stdin = []byte(stdin)
	return req
}

// A python script run by a warm sandbox's stand-by (the interpreter started
// ahead) prints, exits and fails as the same run cold, under gVisor.
func TestWarmPythonRunsAsCold(t *testing.T) {
	ws, cold := coldRunsc(t)
	sh := pyShape(ws)
	warm := warmRunner(t, sh)
	// Rootless, runsc passes the environment in an order of its own, cold
	// or warm: it is compared sorted.
	scripts := map[string]string{
		"namespace": `import sys, os, json
g = {k: (type(v).__name__ if k in ("__builtins__", "__loader__") else v) for k, v in globals().items() if k not in ("json", "sys", "os")}
print(json.dumps([sys.argv, sys.orig_argv, sys.path, sys.flags.isolated, sys.flags.dont_write_bytecode, sys.executable, g], default=repr))
print(json.dumps([sorted(os.environ.items()), os.getcwd(), os.getpid(), os.getuid(), sorted(sys.modules), sys.stdin.read()]))
print(open("data.txt").read(), open("/proc/self/status").read().count("Cap"))
`,
		"traceback":            "def f():\n    raise ValueError('boom') from KeyError('k')\nprint('before')\nf()\n",
		"exit with text":       "import sys\nprint('out')\nsys.exit('bye')\n",
		"exit status":          "import sys\nsys.exit(3)\n",
		"syntax error":         "x = (\n",
		"interrupt":            "raise KeyboardInterrupt\n",
		"no such module":       "import nonexistent_module\n",
		"atexit, threads":      "import atexit, sys, threading, time\natexit.register(lambda: print('atexit', file=sys.stderr))\nthreading.Thread(target=lambda: (time.sleep(0.2), print('thread'))).start()\nprint('main', end='')\n",
		"pickle":               "import pickle\nclass C: pass\nprint(type(pickle.loads(pickle.dumps(C()))).__module__, __name__ == '__main__')\n",
		"encoding cookie":      "# -*- coding: latin-1 -*-\nprint('caf\xe9')\n",
		"stdin bytes":          "import sys\ndata = sys.stdin.buffer.read()\nprint(len(data), data[:5])\n",
		"writes and limits":    "import resource\nprint(resource.getrlimit(resource.RLIMIT_NOFILE), resource.getrlimit(resource.RLIMIT_CPU))\nopen('/tmp/x', 'w').write('x')\ntry:\n    open('/usr/pwned', 'w')\nexcept OSError as e:\n    print(e.errno)\n",
		"shadowed builtins":    "type = 'csv'\nisinstance = 1\nclass SystemExit(Exception): pass\nraise ValueError('x')\n",
		"a failing excepthook": "import sys\ndef h(*a): raise RuntimeError('hook')\nsys.excepthook = h\nraise ValueError('x')\n",
		"not UTF-8":            "print('\xff')\n",
		"network":              "import socket\ntry:\n    socket.create_connection(('127.0.0.1', 22), timeout=2)\nexcept OSError as e:\n    print(type(e).__name__)\n",
	}
	for name, script := range scripts {
		t.Run(name, func(t *testing.T) {
			req := pyRun(sh, script, "stdin\nbytes\x00\xff", "a", "two words", "")
			want := run(t, cold, req)
			before := warm.(sandbox.Warmer).WarmStats().Warm
			got := run(t, warm, req)
			require.Equal(t, before+1, warm.(sandbox.Warmer).WarmStats().Warm, "the run took a warm sandbox")
			requireSameRun(t, want, got)
		})
	}

	// The script ran in the stand-by's process (the interpreter started
	// ahead); it sees the stand-by's frames above its own, the one thing
	// that tells them apart besides /proc/self/cmdline.
	req := pyRun(sh, "import inspect\nprint(open('/proc/self/cmdline', 'rb').read().split(b'\\0')[3], len(inspect.stack()))\n", "")
	require.Equal(t, "b'/run/toolwarden/script.py' 1\n", string(run(t, cold, req).Stdout))
	require.Equal(t, "b'-c' 3\n", string(run(t, warm, req).Stdout))

	// A run without HOME may not take a stand-by's sandbox: it runs cold,
	// counted as such.
	before := warm.(sandbox.Warmer).WarmStats()
	req.Env = []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
	require.Equal(t, "b'/run/toolwarden/script.py' 1\n", string(run(t, warm, req).Stdout))
	after := warm.(sandbox.Warmer).WarmStats()
	require.Equal(t, before.Warm, after.Warm)
	require.Equal(t, before.Cold+1, after.Cold)
}
