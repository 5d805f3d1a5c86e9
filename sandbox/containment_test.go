package sandbox_test

import (
	"context"
	"fmt"
	"net"
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

// stateDir is shared by the tests: runsc keeps a network-namespace mount
// in its root that outlives a t.TempDir.
var stateDir = filepath.Join(os.TempDir(), "toolwarden-test-sandbox")

// runners returns every real backend on this machine; under scripts/test a
// missing one is a failure.
func runners(t *testing.T) []sandbox.Runner {
	t.Helper()
	var out []sandbox.Runner
	for _, backend := range []string{"runsc", "bwrap"} {
		r, err := sandbox.Detect(context.Background(), sandbox.DetectOptions{Backend: backend, StateDir: filepath.Join(stateDir, backend)})
		if err != nil {
			if testenv.Strict() {
				t.Fatalf("%s: %v (scripts/sandbox-setup should have installed it)", backend, err)
			}
			t.Logf("skipping %s: %v", backend, err)
			continue
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		testenv.Missing(t, "no sandbox backend works here")
	}
	return out
}

func run(t *testing.T, r sandbox.Runner, req sandbox.Request) sandbox.Result {
	t.Helper()
	if req.Env == nil {
		req.Env = []string{"PATH=/usr/bin:/bin", "HOME=/tmp"}
	}
	if req.Limits.Timeout == 0 {
		req.Limits.Timeout = 20 * time.Second
	}
	res, err := r.Run(context.Background(), req)
	require.NoError(t, err)
	return res
}

func bash(script string) []string { return []string{"/usr/bin/bash", "-c", script} }

func TestContainment(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "data.txt"), []byte("workspace data\n"), 0o644))
	outside := t.TempDir()
	t.Setenv("AWS_SECRET_ACCESS_KEY", "fake-secret-for-test")
	// The last runners take sandboxes booted ahead for the shapes below:
	// waiting in warmInit, then in the Python stand-by, which every run
	// here (bash, python -c) replaces, as a run of another program would.
	warm := warmRunners(t, sandbox.Request{}, sandbox.Request{Workspace: ws})
	standby := pyShape(ws)
	standby.Env = []string{"PATH=/usr/bin:/bin", "HOME=/tmp"} // run's default
	noWs := standby
	noWs.Workspace = ""
	warm = append(warm, warmRunners(t, noWs, standby)...)
	for _, r := range append(runners(t), warm...) {
		t.Run(r.Name(), func(t *testing.T) {
			t.Run("reads the workspace", func(t *testing.T) {
				res := run(t, r, sandbox.Request{Argv: bash("cat data.txt; id -u"), Workspace: ws})
				require.Equal(t, 0, res.ExitCode, string(res.Stderr))
				require.Equal(t, fmt.Sprintf("workspace data\n%d\n", sandbox.InsideUID(r)), string(res.Stdout))
			})
			t.Run("no capabilities, whatever the uid", func(t *testing.T) {
				res := run(t, r, sandbox.Request{Argv: bash("grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status")})
				require.Equal(t, 0, res.ExitCode, string(res.Stderr))
				lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
				require.Len(t, lines, 5, string(res.Stdout))
				for _, line := range lines {
					require.Regexp(t, `:\s+0+$`, line, "rootless gVisor runs as its uid 0, which must hold no capability")
				}
			})
			t.Run("network connect to a host listener fails", func(t *testing.T) {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				require.NoError(t, err)
				defer ln.Close()
				accepted := make(chan struct{}, 1)
				go func() {
					if c, err := ln.Accept(); err == nil {
						c.Close()
						accepted <- struct{}{}
					}
				}()
				port := ln.Addr().(*net.TCPAddr).Port
				res := run(t, r, sandbox.Request{Argv: []string{"/usr/bin/python3", "-c",
					fmt.Sprintf("import socket\nsocket.create_connection(('127.0.0.1', %d), timeout=3)\nprint('connected')", port)}})
				require.NotEqual(t, 0, res.ExitCode)
				require.NotContains(t, string(res.Stdout), "connected")
				select {
				case <-accepted:
					t.Fatal("the host listener accepted a connection from the sandbox")
				case <-time.After(100 * time.Millisecond):
				}
			})
			t.Run("writes outside scratch fail", func(t *testing.T) {
				for _, target := range []string{"/usr/pwned", "/workspace/pwned", "/etc/pwned", "/pwned", filepath.Join(outside, "pwned")} {
					res := run(t, r, sandbox.Request{Argv: bash("echo x > " + target), Workspace: ws})
					require.NotEqual(t, 0, res.ExitCode, target)
				}
				require.NoFileExists(t, filepath.Join(ws, "pwned"))
				require.NoFileExists(t, filepath.Join(outside, "pwned"))
				require.NoFileExists(t, "/usr/pwned")
			})
			t.Run("writable workspace when asked", func(t *testing.T) {
				rw := t.TempDir()
				if os.Geteuid() == 0 {
					// As root, sandboxed programs run as nobody: a writable
					// workspace must be writable by that user.
					require.NoError(t, os.Chmod(rw, 0o777))
				} else {
					// Rootless, the user's own private workspace works, and
					// what a script writes is the user's.
					require.NoError(t, os.Chmod(rw, 0o700))
				}
				res := run(t, r, sandbox.Request{Argv: bash("echo made > made.txt"), Workspace: rw, WorkspaceWritable: true})
				require.Equal(t, 0, res.ExitCode, string(res.Stderr))
				require.FileExists(t, filepath.Join(rw, "made.txt"))
				if os.Geteuid() != 0 {
					fi, err := os.Stat(filepath.Join(rw, "made.txt"))
					require.NoError(t, err)
					st := fi.Sys().(*syscall.Stat_t)
					require.Equal(t, uint32(os.Getuid()), st.Uid, "the file belongs to the invoking user")
					require.Equal(t, uint32(os.Getgid()), st.Gid)
					require.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "ordinary permissions (umask 022)")
				}
			})
			t.Run("host secrets are not visible", func(t *testing.T) {
				for _, probe := range []string{"cat /etc/shadow", "ls /root", "ls " + outside} {
					res := run(t, r, sandbox.Request{Argv: bash(probe)})
					require.NotEqual(t, 0, res.ExitCode, probe)
				}
				res := run(t, r, sandbox.Request{Argv: bash("env; cat /proc/self/environ")})
				require.NotContains(t, string(res.Stdout)+string(res.Stderr), "fake-secret-for-test")
			})
			t.Run("fork bomb is contained", func(t *testing.T) {
				res := run(t, r, sandbox.Request{Argv: bash("f(){ f|f& }; f; sleep 4; echo survived"), Limits: sandbox.Limits{Timeout: 8 * time.Second}})
				require.Less(t, res.Duration, 15*time.Second)
				after := run(t, r, sandbox.Request{Argv: bash("echo alive")})
				require.Equal(t, "alive\n", string(after.Stdout), "the backend still works after a fork bomb")
			})
			t.Run("memory hog is killed and reported", func(t *testing.T) {
				res := run(t, r, sandbox.Request{Argv: []string{"/usr/bin/python3", "-c",
					"x=[]\nwhile True: x.append(bytearray(16<<20))"}, Limits: sandbox.Limits{MemoryBytes: 128 << 20}})
				require.NotEqual(t, 0, res.ExitCode)
				if strings.HasPrefix(sandbox.EnforcementOf(r).Limits[sandbox.EnforceMemory], "cgroup") {
					require.Equal(t, sandbox.LimitMemory, res.Limit)
					return
				}
				// A per-process rlimit: the allocation fails inside the
				// program, which the sandbox cannot tell from its own exit.
				require.Contains(t, string(res.Stderr), "MemoryError", "python's allocation past 128 MB failed")
				require.Less(t, res.Duration, 15*time.Second)
			})
			t.Run("infinite loop is killed at the timeout", func(t *testing.T) {
				res := run(t, r, sandbox.Request{Argv: bash("while :; do :; done"), Limits: sandbox.Limits{Timeout: 2 * time.Second}})
				require.Equal(t, sandbox.LimitTimeout, res.Limit)
				require.Less(t, res.Duration, 10*time.Second)
			})
			t.Run("output flood is truncated", func(t *testing.T) {
				res := run(t, r, sandbox.Request{Argv: []string{"/usr/bin/yes"}, Limits: sandbox.Limits{OutputBytes: 4096}})
				require.Equal(t, sandbox.LimitOutput, res.Limit)
				require.True(t, res.StdoutTruncated)
				require.Len(t, res.Stdout, 4096)
			})
			t.Run("1 GB file write is stopped", func(t *testing.T) {
				res := run(t, r, sandbox.Request{Argv: bash("head -c 1000000000 /dev/zero > /tmp/big; echo rc=$?; stat -c %s /tmp/big")})
				require.Contains(t, string(res.Stdout), "rc=1", "the write must fail")
				size := strings.TrimSpace(strings.SplitN(string(res.Stdout), "\n", 3)[1])
				require.LessOrEqual(t, len(size), 8, "file stopped below 100 MB, got %s bytes", size)
			})
		})
	}
}

// TestCancelLeavesNothing: a cancelled run is killed and removed, and what
// it printed before is returned, with the limit that stopped it.
func TestCancelLeavesNothing(t *testing.T) {
	for _, r := range runners(t) {
		t.Run(r.Name(), func(t *testing.T) {
			ws := t.TempDir()
			if os.Geteuid() == 0 {
				require.NoError(t, os.Chmod(ws, 0o777)) // the run's unprivileged user marks its start here
			}
			ctx, cancel := context.WithCancel(context.Background())
			type ended struct {
				res sandbox.Result
				err error
			}
			done := make(chan ended, 1)
			go func() {
				res, err := r.Run(ctx, sandbox.Request{Argv: bash("echo before; : > started; exec /usr/bin/sleep 1000"), Env: []string{"PATH=/usr/bin"},
					Workspace: ws, WorkspaceWritable: true, Limits: sandbox.Limits{Timeout: time.Minute}})
				done <- ended{res, err}
			}()
			require.Eventually(t, func() bool {
				_, err := os.Stat(filepath.Join(ws, "started"))
				return err == nil && (len(sleepers()) > 0 || runscSleeping())
			}, 15*time.Second, 50*time.Millisecond)
			cancel()
			select {
			case e := <-done:
				require.NoError(t, e.err)
				require.Equal(t, sandbox.LimitCanceled, e.res.Limit)
				require.Equal(t, "before\n", string(e.res.Stdout), "the output so far is kept")
			case <-time.After(15 * time.Second):
				t.Fatal("Run did not return after cancel")
			}
			require.Empty(t, sleepers(), "no sleep 1000 process is left")
			require.Empty(t, leftovers(t), "no cgroup, run directory or container is left")
		})
	}
}

// TestTimeoutLeavesNothing: a run stopped at its timeout is killed and
// removed like a cancelled one.
func TestTimeoutLeavesNothing(t *testing.T) {
	for _, r := range runners(t) {
		t.Run(r.Name(), func(t *testing.T) {
			res := run(t, r, sandbox.Request{Argv: bash("echo before; exec /usr/bin/sleep 1000"), Env: []string{"PATH=/usr/bin"},
				Limits: sandbox.Limits{Timeout: 3 * time.Second}})
			require.Equal(t, sandbox.LimitTimeout, res.Limit)
			require.Equal(t, "before\n", string(res.Stdout))
			require.Empty(t, sleepers(), "no sleep 1000 process is left")
			require.Empty(t, leftovers(t), "no cgroup, run directory or container is left")
		})
	}
}

// sleepers lists host processes running "sleep 1000".
func sleepers() []string {
	out, _ := exec.Command("pgrep", "-f", "^/usr/bin/sleep 1000$").Output()
	return strings.Fields(string(out))
}

// runscSleeping reports a runsc sandbox alive in the test state dir (under
// gVisor the sleep is not a host process).
func runscSleeping() bool {
	out, _ := exec.Command("pgrep", "-f", "runsc-sandbox.*toolwarden-test-sandbox").Output()
	return len(out) > 0
}

// leftovers lists what a run of this process could have left behind.
func leftovers(t *testing.T) []string {
	prefix := fmt.Sprintf("tw-%d-", os.Getpid())
	var out []string
	matches, _ := filepath.Glob("/sys/fs/cgroup/*/toolwarden/" + prefix + "*")
	more, _ := filepath.Glob("/sys/fs/cgroup/*/*/*/toolwarden/" + prefix + "*")
	out = append(append(out, matches...), more...)
	runs, _ := filepath.Glob(filepath.Join(stateDir, "*", "*", "runs", prefix+"*"))
	out = append(out, runs...)
	if list, err := exec.Command("pgrep", "-f", "runsc.*"+prefix).Output(); err == nil {
		out = append(out, strings.Fields(string(list))...)
	}
	return out
}

func TestStartupCleansCrashLeftovers(t *testing.T) {
	testenv.Root(t)
	dead := exec.Command("/usr/bin/true")
	require.NoError(t, dead.Run())
	id := fmt.Sprintf("tw-%d-deadbeef0000", dead.Process.Pid)
	dir := filepath.Join(stateDir, "bwrap", "runs", id)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "files"), 0o755))
	cg := "/sys/fs/cgroup/pids/toolwarden/" + id
	require.NoError(t, os.MkdirAll(cg, 0o755))
	live := fmt.Sprintf("tw-%d-live00000000", os.Getppid()) // a live server's run stays
	liveDir := filepath.Join(stateDir, "bwrap", "runs", live)
	require.NoError(t, os.MkdirAll(liveDir, 0o755))
	defer os.RemoveAll(liveDir)

	_, err := sandbox.Detect(context.Background(), sandbox.DetectOptions{Backend: "bwrap", StateDir: stateDir})
	require.NoError(t, err)
	require.NoDirExists(t, dir)
	require.NoDirExists(t, cg)
	require.DirExists(t, liveDir)
}

// A program's own exit status is its result, whatever the value; only the
// sandbox's set-up failing is an error.
func TestExitStatusIsTheProgramsOwn(t *testing.T) {
	for _, r := range append(runners(t), warmRunners(t)...) {
		t.Run(r.Name(), func(t *testing.T) {
			for _, code := range []int{0, 1, 125, 127} {
				res := run(t, r, sandbox.Request{Argv: bash(fmt.Sprintf("exit %d", code))})
				require.Equal(t, code, res.ExitCode)
			}
		})
	}
}
