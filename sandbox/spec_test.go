package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/require"
)

func TestOCISpecIsolation(t *testing.T) {
	root := &rootfs{dir: "/state/rootfs-x", binds: []string{"/usr"}}
	req := Request{Argv: []string{"/usr/bin/true"}, Workspace: "/ws", Limits: DefaultLimits}
	s := ociSpec(req, root, "/state/files", "toolwarden/tw-1-a", false)
	require.True(t, s.Root.Readonly)
	require.Equal(t, uint32(65534), s.Process.User.UID)
	require.Equal(t, uint32(65534), s.Process.User.GID)
	require.True(t, s.Process.NoNewPrivileges)
	require.Empty(t, s.Process.Capabilities.Bounding)
	require.Empty(t, s.Process.Capabilities.Effective)
	require.Contains(t, s.Linux.Namespaces, specs.LinuxNamespace{Type: specs.NetworkNamespace}, "a fresh, empty network namespace")
	require.Equal(t, DefaultLimits.Pids, *s.Linux.Resources.Pids.Limit)
	require.Equal(t, DefaultLimits.MemoryBytes, *s.Linux.Resources.Memory.Limit)
	for _, m := range s.Mounts {
		if m.Type == "bind" {
			require.Contains(t, m.Options, "ro", "bind %s is read-only", m.Destination)
		}
		if m.Destination == ScratchDir {
			require.Contains(t, m.Options, "size=67108864")
		}
	}
	core := slices.IndexFunc(s.Process.Rlimits, func(r specs.POSIXRlimit) bool { return r.Type == "RLIMIT_CORE" })
	require.Equal(t, uint64(0), s.Process.Rlimits[core].Hard)

	req.WorkspaceWritable = true
	s = ociSpec(req, root, "/state/files", "", false)
	for _, m := range s.Mounts {
		if m.Destination == WorkspaceDir {
			require.Contains(t, m.Options, "rw")
		}
	}
}

func TestBwrapArgvIsolation(t *testing.T) {
	root := &rootfs{dir: "/state/rootfs-x", binds: []string{"/usr"}}
	b := &Bwrap{Path: "/usr/bin/bwrap", Prlimit: "/usr/bin/prlimit", root: root}
	argv := bwrapArgv(b, Request{Argv: []string{"/usr/bin/true", "--flag"},
		Env: []string{"A=1"}, Workspace: "/ws", Limits: DefaultLimits}, "/state/files", 3)
	joined := strings.Join(argv, " ")
	for _, want := range []string{"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
		"--new-session", "--cap-drop ALL", "--clearenv", "--uid 65534", "--remount-ro /", "--ro-bind /ws /workspace", "--core=0"} {
		require.Contains(t, joined, want)
	}
	require.NotContains(t, joined, "--share-net")
	require.Equal(t, []string{"--", "/usr/bin/true", "--flag"}, argv[len(argv)-3:], "the program's argv comes last, after --")
}

func TestWriteFilesRefusesPaths(t *testing.T) {
	for _, name := range []string{"../x", "a/b", "", ".", ".."} {
		require.Error(t, writeFiles(t.TempDir(), map[string][]byte{name: nil}), name)
	}
}

func TestJoinFailureIsReportedApartFromTheExitStatus(t *testing.T) {
	cg := &runCgroup{id: "tw-test", dirs: map[string]string{"pids": t.TempDir() + "/missing"}}
	s, err := newSupervised(launch{argv: []string{"/usr/bin/true"}}, cg, Request{Limits: DefaultLimits})
	require.NoError(t, err)
	_, err = s.run(context.Background(), 10*time.Second, func() {})
	require.NoError(t, err)
	require.Contains(t, s.setupFailure(), "cannot join cgroup")

	s, err = newSupervised(launch{argv: []string{"/usr/bin/sh", "-c", "echo forged >&3; exit 125"}}, &runCgroup{id: "tw-test"}, Request{Limits: DefaultLimits})
	require.NoError(t, err)
	_, err = s.run(context.Background(), 10*time.Second, func() {})
	require.NoError(t, err)
	require.Empty(t, s.setupFailure(), "the program cannot write to the report pipe")
}

func TestRootlessOCISpec(t *testing.T) {
	root := &rootfs{dir: "/state/rootfs-x", binds: []string{"/usr"}}
	req := Request{Argv: []string{"/usr/bin/true"}, Limits: DefaultLimits}
	s := ociSpec(req, root, "/state/files", "", true)
	require.Equal(t, uint32(0), s.Process.User.UID, "gVisor's root, mapped to the invoking user")
	require.Empty(t, s.Process.Capabilities.Effective, "and without any capability")
	require.Empty(t, s.Process.Capabilities.Bounding, "not even after an execve as uid 0")
	require.True(t, s.Process.NoNewPrivileges)
	require.Nil(t, s.Linux.Resources, "no cgroup rootless")
	got := map[string]uint64{}
	for _, r := range s.Process.Rlimits {
		got[r.Type] = r.Hard
	}
	require.Equal(t, uint64(2<<30), got["RLIMIT_AS"], "memory is bounded per process, with room for Go to start")
	require.Equal(t, DefaultLimits.NProc, got["RLIMIT_NPROC"])
	require.Equal(t, uint64(61), got["RLIMIT_CPU"], "timeout × cpus, plus a second")
}

func TestRootlessBwrapArgv(t *testing.T) {
	root := &rootfs{dir: "/state/rootfs-x", binds: []string{"/usr"}}
	b := &Bwrap{Path: "/usr/bin/bwrap", Prlimit: "/usr/bin/prlimit", root: root, Rootless: true}
	argv := bwrapArgv(b, Request{Argv: []string{"/usr/bin/true"}, Limits: DefaultLimits}, "/state/files", 3)
	joined := strings.Join(argv, " ")
	for _, want := range []string{"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
		"--new-session", "--cap-drop ALL", "--clearenv", "--seccomp 3", "--data=536870912", "--cpu=61", "--core=0"} {
		require.Contains(t, joined, want)
	}
	require.NotContains(t, joined, "--uid", "the invoking user's own uid")
	require.NotContains(t, joined, "systemd-run")

	b.Scope = &scope{path: "/usr/bin/systemd-run"}
	argv = bwrapArgv(b, Request{Argv: []string{"/usr/bin/true"}, Limits: DefaultLimits}, "/state/files", 3)
	joined = strings.Join(argv, " ")
	require.Equal(t, "/usr/bin/systemd-run", argv[0])
	for _, want := range []string{"--user --scope", "MemoryMax=536870912", "MemorySwapMax=0", "TasksMax=1024", "CPUQuota=100%"} {
		require.Contains(t, joined, want)
	}
	require.NotContains(t, joined, "--data=", "the scope bounds memory, as a total")
}

func TestThreadsOf(t *testing.T) {
	dir := t.TempDir()
	stat := "42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 7 0 100 1000 10"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644))
	require.Equal(t, uint64(7), threadsOf(dir))
	require.Positive(t, userTasks(), "this test's own threads count")
}

// BenchmarkUserTasks is the /proc scan each rootless bubblewrap run without
// a cgroup pays to set RLIMIT_NPROC.
func BenchmarkUserTasks(b *testing.B) {
	for b.Loop() {
		userTasks()
	}
}

func TestTaskCountIsCachedForASecond(t *testing.T) {
	scans := 0
	c := &taskCount{scan: func() uint64 { scans++; return 7 }}
	require.Equal(t, uint64(7), c.get())
	require.Equal(t, uint64(7), c.get())
	require.Equal(t, 1, scans, "a burst of runs scans /proc once")
	c.at = c.at.Add(-2 * time.Second)
	c.get()
	require.Equal(t, 2, scans)
}

func TestRootlessRunscInAScope(t *testing.T) {
	r := &Runsc{Path: "/usr/bin/runsc", Platform: "systrap", StateDir: t.TempDir(), Rootless: true,
		root: &rootfs{dir: "/state/rootfs-x"}, Scope: &scope{path: "/usr/bin/systemd-run"}}
	ln, err := r.command("tw-1-a", t.TempDir(), "/state/files", Request{Argv: []string{"/usr/bin/true"}, Limits: DefaultLimits}, nil)
	require.NoError(t, err)
	joined := strings.Join(ln.argv, " ")
	require.True(t, strings.HasPrefix(joined, "/usr/bin/systemd-run --user --scope"), joined)
	require.Contains(t, joined, "-- /usr/bin/runsc --root=")
	require.Contains(t, joined, "--rootless")
	require.Empty(t, r.Enforcement().Weaker, "a delegated scope gives totals again")
	r.Scope = nil
	require.ElementsMatch(t, []string{EnforceMemory, EnforcePids, EnforceCPU}, r.Enforcement().Weaker)
}

// TestModCacheIsMountedReadOnly: both backends mount a Go module cache
// read-only at ModCacheDir, and only when one is asked for.
func TestModCacheIsMountedReadOnly(t *testing.T) {
	root := &rootfs{dir: "/state/rootfs-x", binds: []string{"/usr"}}
	req := Request{Argv: []string{"/usr/bin/true"}, ModCache: "/state/gomod/abc", Limits: DefaultLimits}
	s := ociSpec(req, root, "/state/files", "", false)
	i := slices.IndexFunc(s.Mounts, func(m specs.Mount) bool { return m.Destination == ModCacheDir })
	require.GreaterOrEqual(t, i, 0)
	require.Equal(t, "/state/gomod/abc", s.Mounts[i].Source)
	require.Contains(t, s.Mounts[i].Options, "ro")

	b := &Bwrap{Path: "/usr/bin/bwrap", Prlimit: "/usr/bin/prlimit", root: root}
	require.Contains(t, strings.Join(bwrapArgv(b, req, "/state/files", 3), " "), "--ro-bind /state/gomod/abc /gomodcache")

	req.ModCache = ""
	require.NotContains(t, strings.Join(bwrapArgv(b, req, "/state/files", 3), " "), ModCacheDir)
	require.False(t, slices.ContainsFunc(ociSpec(req, root, "/state/files", "", false).Mounts, func(m specs.Mount) bool { return m.Destination == ModCacheDir }))
}
