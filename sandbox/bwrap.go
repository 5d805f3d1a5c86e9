package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Bwrap runs programs under bubblewrap: fresh namespaces of every kind, no
// capabilities, a read-only root built from the same skeleton as gVisor's,
// and rlimits set with prlimit. As root, each run also gets a cgroup
// (bubblewrap started by root does not enforce RLIMIT_NPROC, so the pids
// cgroup is what stops a fork bomb) and runs as nobody. Rootless, the
// program keeps the invoking user's uid through a user namespace, a
// seccomp filter (seccompPolicy) closes the kernel interfaces a user
// namespace would open, and limits come from a delegated cgroup scope when
// the user has one, else from rlimits (rootlessRlimits).
type Bwrap struct {
	Path, Prlimit string
	StateDir      string
	// Rootless is set when the server is not root.
	Rootless bool
	// Scope is the systemd-run command line that puts a rootless run in a
	// delegated cgroup with its limits; nil without delegation.
	Scope   *scope
	root    *rootfs
	seccomp []byte
}

// NewBwrap prepares the state directory of a bubblewrap backend; rootless
// when the server is not root.
func NewBwrap(path, prlimit, stateDir string) (*Bwrap, error) {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, err
	}
	root, err := prepareRootfs(stateDir)
	if err != nil {
		return nil, fmt.Errorf("prepare sandbox rootfs: %w", err)
	}
	b := &Bwrap{Path: path, Prlimit: prlimit, StateDir: stateDir, root: root, Rootless: os.Geteuid() != 0}
	if b.Rootless {
		if b.seccomp, err = seccompProgram(); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// Name implements Runner.
func (b *Bwrap) Name() string {
	if b.Rootless {
		return "bwrap-rootless"
	}
	return "bwrap"
}

// Run implements Runner.
func (b *Bwrap) Run(ctx context.Context, req Request) (Result, error) {
	return runWith(ctx, b, b.StateDir, req)
}

func (b *Bwrap) cgroups() bool { return !b.Rootless }

// command hands the rootless seccomp filter over a pipe: bubblewrap reads
// it to the end before it starts the program.
func (b *Bwrap) command(_, _, filesDir string, req Request, cg *runCgroup) (launch, error) {
	ln := launch{join: cg != nil}
	fd := 3
	if ln.join {
		fd++ // after the join script's report pipe
	}
	if b.Rootless {
		r, w, err := os.Pipe()
		if err != nil {
			return launch{}, err
		}
		_, err = w.Write(b.seccomp) // a few KB: fits the pipe's buffer
		w.Close()
		if err != nil {
			r.Close()
			return launch{}, err
		}
		ln.files = []*os.File{r}
	}
	ln.argv = bwrapArgv(b, req, filesDir, fd)
	return ln, nil
}

// stop kills everything in the run's cgroup; --die-with-parent and the
// PID namespace take the rest down (all of it, rootless).
func (b *Bwrap) stop(_ string, cg *runCgroup) {
	if cg == nil {
		return
	}
	for _, d := range cg.dirs {
		killCgroupProcs(d)
	}
}

func (b *Bwrap) finish(string, *supervised, bool) {}

// bwrapArgv is the whole isolation policy of a bubblewrap run, in one
// place; it mirrors ociSpec. seccompFD is the descriptor of the rootless
// filter.
func bwrapArgv(b *Bwrap, req Request, filesDir string, seccompFD int) []string {
	l := req.Limits
	root := b.root
	if req.root != nil {
		root = req.root
	}
	var argv []string
	if b.Rootless && b.Scope != nil {
		argv = b.Scope.argv(l)
	}
	argv = append(argv, b.Prlimit)
	if b.Rootless {
		argv = append(argv, rootlessRlimits(l, b.Scope == nil)...)
	} else {
		argv = append(argv, "--nofile="+strconv.FormatUint(l.NoFile, 10), "--nproc="+strconv.FormatUint(l.NProc, 10),
			"--fsize="+strconv.FormatInt(l.FileSize, 10), "--as="+strconv.FormatInt(l.AddressSpace, 10), "--core=0")
	}
	argv = append(argv, "--", b.Path,
		"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
		"--cap-drop", "ALL", "--clearenv")
	if b.Rootless {
		// The invoking user's own uid and gid, mapped through the user
		// namespace: what a script writes is the user's.
		argv = append(argv, "--seccomp", strconv.Itoa(seccompFD))
	} else {
		argv = append(argv, "--uid", strconv.Itoa(sandboxUID), "--gid", strconv.Itoa(sandboxUID))
	}
	argv = append(argv, "--hostname", "sandbox",
		"--ro-bind", root.dir, "/",
		"--proc", "/proc", "--dev", "/dev",
		"--size", strconv.FormatInt(l.ScratchBytes, 10), "--perms", "1777", "--tmpfs", ScratchDir,
		"--ro-bind", filesDir, FilesDir,
	)
	for _, d := range root.binds {
		argv = append(argv, "--ro-bind", d, d)
	}
	cwd := ScratchDir
	if req.Workspace != "" {
		mode := "--ro-bind"
		if req.WorkspaceWritable {
			mode = "--bind"
		}
		argv = append(argv, mode, req.Workspace, WorkspaceDir)
		cwd = WorkspaceDir
	}
	if req.Cache != "" {
		argv = append(argv, "--ro-bind", req.Cache, CacheDir)
	}
	for _, m := range req.netMounts {
		argv = append(argv, "--ro-bind", m.src, m.dst)
	}
	if req.ModCache != "" {
		argv = append(argv, "--ro-bind", req.ModCache, ModCacheDir)
	}
	for _, kv := range req.Env {
		k, v, _ := strings.Cut(kv, "=")
		argv = append(argv, "--setenv", k, v)
	}
	argv = append(argv, "--chdir", cwd, "--remount-ro", "/", "--")
	return append(argv, req.Argv...)
}

// Cleanup removes run directories and cgroups left by a crashed server.
func (b *Bwrap) Cleanup() error {
	if err := removeLeftoverRuns(filepath.Join(b.StateDir, "runs")); err != nil {
		return err
	}
	if b.Rootless {
		return nil // no cgroup of ours; a scope goes with its processes
	}
	return cleanupCgroups()
}
