package e2e

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit/audittest"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/sandbox"
)

// TestUpstreamSandboxEscapeAsOrdinaryAccount is TestUpstreamSandboxEscape
// with the server started as the ordinary test account, as a desk user's
// IDE starts it over stdio: the hostile upstream runs under the rootless
// backend, its tool is listed and called through the guard, and it can
// neither list the user's home or the server's directory, nor write into
// the home (which the user could) or the read-only workspace, nor reach
// a host port. When the server exits, no process it started is left.
func TestUpstreamSandboxEscapeAsOrdinaryAccount(t *testing.T) {
	testenv.Root(t)
	home := testenv.Need(t, AccountEnv, AccountHomeEnv)[1]
	bin := readableHostile(t)
	for _, backend := range upstreamBackends {
		t.Run(backend, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer ln.Close()
			dialed := make(chan struct{}, 1)
			go func() {
				if c, err := ln.Accept(); err == nil {
					c.Close()
					dialed <- struct{}{}
				}
			}()
			var base string
			a := startAsAccount(t, backend, func(b string) string {
				base = b
				return `
policy:
  allow: [hostile__escape]
upstreams:
  - name: hostile
    command: [` + bin + `, --attack]
    mounts: [` + filepath.Dir(bin) + `]
    connect_timeout: 2m
`
			})
			names := listNames(t, a)
			require.Contains(t, names, "hostile__escape")
			require.NotContains(t, names, "hostile__envdigest", "an upstream tool the policy does not name is hidden")
			tree := serverTree(t, base, backend)

			inHome := filepath.Join(home, fmt.Sprintf("escaped-%d.txt", os.Getpid()))
			t.Cleanup(func() { os.Remove(inHome) })
			for _, read := range []string{home, base} {
				for _, target := range []string{inHome, filepath.Join(sandbox.WorkspaceDir, "escaped.txt")} {
					res := callUpstream(t, a.client, "hostile__escape", map[string]any{"read": read, "write": target, "dial": ln.Addr().String()})
					require.False(t, res.IsError, "%+v", res.Content)
					require.Equal(t, "read refused, write refused, dial refused", res.Content[0].(mcp.TextContent).Text, "%s, %s", read, target)
				}
			}
			for _, p := range []string{inHome, filepath.Join(a.ws, "escaped.txt")} {
				_, err := os.Stat(p)
				require.ErrorIs(t, err, os.ErrNotExist, p)
			}
			select {
			case <-dialed:
				t.Fatal("the sandboxed upstream reached a host port")
			default:
			}
			require.True(t, hasAuditLine(t, a.audit, "hostile__escape", guard.OutcomeCompleted), "the calls are audited")

			_ = a.client.Close() // its error is how the server ended: mcp-go closes the pipes first
			tree.gone(t)
		})
	}
}

// TestUpstreamSandboxKilledServerAsOrdinaryAccount: an IDE that dies
// takes the server run as the ordinary account with it (SIGKILL, no
// shutdown of its own); the sandboxed upstream and every process of its
// sandbox go too, under each rootless backend.
func TestUpstreamSandboxKilledServerAsOrdinaryAccount(t *testing.T) {
	testenv.Root(t)
	testenv.Need(t, AccountEnv, AccountHomeEnv)
	bin := readableHostile(t)
	for _, backend := range upstreamBackends {
		t.Run(backend, func(t *testing.T) {
			var base string
			a := startAsAccount(t, backend, func(b string) string {
				base = b
				return `
policy:
  allow: [hostile__notes]
upstreams:
  - name: hostile
    command: [` + bin + `]
    mounts: [` + filepath.Dir(bin) + `]
    connect_timeout: 2m
`
			})
			res := callUpstream(t, a.client, "hostile__notes", nil)
			require.False(t, res.IsError, "%+v", res.Content)
			tree := serverTree(t, base, backend)
			require.NoError(t, syscall.Kill(tree[0].pid, syscall.SIGKILL))
			tree.gone(t)
		})
	}
}

// TestUpstreamSandboxedEverythingAsOrdinaryAccount runs the reference
// server "everything" (npm, node) as a sandboxed upstream of a server
// started as the ordinary test account, under each rootless backend: its
// install is the only host directory it sees besides the system's
// programs, its tools are called through the guard, and when the server
// exits no process it started is left.
func TestUpstreamSandboxedEverythingAsOrdinaryAccount(t *testing.T) {
	testenv.Root(t)
	need := testenv.Need(t, AccountEnv, AccountHomeEnv, "TOOLWARDEN_TEST_SERVER_EVERYTHING")
	bin := need[2]
	prefix := filepath.Dir(filepath.Dir(filepath.Dir(bin)))
	readableBy(t, lookupAccount(t, need[0]), prefix)
	for _, backend := range upstreamBackends {
		t.Run(backend, func(t *testing.T) {
			var base string
			a := startAsAccount(t, backend, func(b string) string {
				base = b
				return `
policy:
  allow: [everything__echo, everything__get-sum]
upstreams:
  - name: everything
    command: [` + bin + `, stdio]
    mounts: [` + prefix + `]
    connect_timeout: 2m
`
			})
			names := listNames(t, a)
			require.Contains(t, names, "everything__echo")
			require.Contains(t, names, "everything__get-sum")
			require.NotContains(t, names, "everything__get-env")
			tree := serverTree(t, base, backend)

			res := callUpstream(t, a.client, "everything__echo", map[string]any{"message": "hello from the account's sandbox"})
			require.False(t, res.IsError, "%+v", res.Content)
			require.Contains(t, res.Content[0].(mcp.TextContent).Text, "hello from the account's sandbox")
			res = callUpstream(t, a.client, "everything__get-sum", map[string]any{"a": 40, "b": 2})
			require.False(t, res.IsError, "%+v", res.Content)
			require.Contains(t, res.Content[0].(mcp.TextContent).Text, "42")
			deniedWith(t, callUpstream(t, a.client, "everything__get-sum", map[string]any{"a": "one", "b": 2}), toolerr.InvalidSchema)
			require.True(t, hasAuditLine(t, a.audit, "everything__get-sum", guard.OutcomeCompleted), "the calls are audited")

			_ = a.client.Close() // its error is how the server ended: mcp-go closes the pipes first
			tree.gone(t)
		})
	}
}

// readableHostile builds the hostile upstream into a directory of its own
// that every account may read (t.TempDir's parent is root's alone).
func readableHostile(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "toolwarden-hostile-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "hostileupstream")
	copyFile(t, buildHostile(t), bin, 0o755)
	return bin
}

// readableBy fails unless the account can read every file under dir and
// enter every directory, as a sandboxed upstream run by it must.
func readableBy(t *testing.T, a account, dir string) {
	t.Helper()
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		want := uint32(0o004)
		if info.IsDir() {
			want = 0o005
		}
		st := info.Sys().(*syscall.Stat_t)
		perm := uint32(info.Mode().Perm())
		switch {
		case int(st.Uid) == a.uid:
			perm >>= 6
		case int(st.Gid) == a.gid:
			perm >>= 3
		}
		if info.Mode()&os.ModeSymlink == 0 && perm&want != want {
			return fmt.Errorf("%s is not readable by %s (mode %v): run its setup script again", p, a.name, info.Mode())
		}
		return nil
	}))
}

// listNames lists the tool names a's client is offered.
func listNames(t *testing.T, a accountServer) []string {
	t.Helper()
	list, err := a.client.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err)
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// hasAuditLine reports whether the audit log at path has a line of tool
// with outcome.
func hasAuditLine(t *testing.T, path, tool string, outcome guard.Outcome) bool {
	t.Helper()
	for _, e := range audittest.Entries(t, path) {
		if e.Tool == tool && e.Outcome == outcome {
			return true
		}
	}
	return false
}

// proc is one process, told apart from a later one with its pid by its
// start time.
type proc struct {
	pid   int
	state string
	start string
	cmd   string
}

// processTree is the server run from base/toolwarden and every process it
// had started when it was taken.
type processTree []proc

// serverTree takes the tree of the server whose program is
// base/toolwarden (each test copies the binary there, so it is this
// test's server alone) while it runs its upstream: besides the server it
// must hold backend's sandbox, which the upstream runs in.
func serverTree(t *testing.T, base, backend string) processTree {
	t.Helper()
	exe := filepath.Join(base, "toolwarden")
	procs := map[int]proc{}
	children := map[int][]int{}
	parent := map[int]int{}
	var running []int // the processes that run exe
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		p, ppid, ok := statProc(pid)
		if !ok {
			continue
		}
		procs[pid] = p
		parent[pid] = ppid
		children[ppid] = append(children[ppid], pid)
		if target, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && target == exe {
			running = append(running, pid)
		}
	}
	// A child the server has forked but not yet exec'd (on a busy machine,
	// one it starts as the scan passes) runs exe too: the server is the
	// one whose parent does not.
	server := 0
	for _, pid := range running {
		if !slices.Contains(running, parent[pid]) {
			require.Zero(t, server, "two servers run %s: %v", exe, running)
			server = pid
		}
	}
	require.NotZero(t, server, "no process runs %s", exe)
	var tree processTree
	var walk func(pid int)
	walk = func(pid int) {
		tree = append(tree, procs[pid])
		for _, c := range children[pid] {
			walk(c)
		}
	}
	walk(server)
	var sandboxed bool
	for _, p := range tree[1:] {
		sandboxed = sandboxed || strings.HasPrefix(filepath.Base(strings.Fields(p.cmd + " _")[0]), backend)
	}
	require.True(t, sandboxed, "the server runs its upstream under %s: %+v", backend, tree)
	return tree
}

// gone waits, for a generous bound on a loaded machine, until no process
// of the tree is left.
func (tree processTree) gone(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var left processTree
		for _, p := range tree {
			// A zombie has exited (the killed server stays one until the
			// client's Close reaps it).
			if q, _, ok := statProc(p.pid); ok && q.start == p.start && q.state != "Z" {
				left = append(left, q)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of the server left after it exited: %+v", left)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// statProc reads the state, start time, parent and command line of pid.
func statProc(pid int) (p proc, ppid int, ok bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return proc{}, 0, false
	}
	// pid (comm) state ppid ... with comm possibly holding spaces and
	// parentheses: the fields follow the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return proc{}, 0, false
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 20 {
		return proc{}, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return proc{pid: pid, state: f[0], start: f[19], cmd: strings.ReplaceAll(strings.TrimSpace(string(cmd)), "\x00", " ")}, ppid, true
}
