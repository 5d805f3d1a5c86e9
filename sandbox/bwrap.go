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
// rlimits set with prlimit, and a per-run cgroup (bubblewrap started by
// root does not enforce RLIMIT_NPROC, so the pids cgroup is what stops a
// fork bomb).
type Bwrap struct {
	Path, Prlimit string
	StateDir      string
	root          *rootfs
}

// NewBwrap prepares the state directory of a bubblewrap backend.
func NewBwrap(path, prlimit, stateDir string) (*Bwrap, error) {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, err
	}
	root, err := prepareRootfs(stateDir)
	if err != nil {
		return nil, fmt.Errorf("prepare sandbox rootfs: %w", err)
	}
	return &Bwrap{Path: path, Prlimit: prlimit, StateDir: stateDir, root: root}, nil
}

// Name implements Runner.
func (b *Bwrap) Name() string { return "bwrap" }

// Run implements Runner.
func (b *Bwrap) Run(ctx context.Context, req Request) (Result, error) {
	return runWith(ctx, b, b.StateDir, req)
}

func (b *Bwrap) command(_, _, filesDir string, req Request) ([]string, bool, error) {
	return bwrapArgv(b.Prlimit, b.Path, req, b.root, filesDir), true, nil
}

// stop kills everything in the run's cgroup; --die-with-parent and the
// PID namespace take the rest down.
func (b *Bwrap) stop(_ string, cg *runCgroup) {
	for _, d := range cg.dirs {
		killCgroupProcs(d)
	}
}

func (b *Bwrap) finish(string, *supervised, bool) {}

// bwrapArgv is the whole isolation policy of a bubblewrap run, in one
// place; it mirrors ociSpec.
func bwrapArgv(prlimit, bwrap string, req Request, root *rootfs, filesDir string) []string {
	l := req.Limits
	argv := []string{prlimit,
		"--nofile=" + strconv.FormatUint(l.NoFile, 10), "--nproc=" + strconv.FormatUint(l.NProc, 10),
		"--fsize=" + strconv.FormatInt(l.FileSize, 10), "--as=" + strconv.FormatInt(l.AddressSpace, 10), "--core=0",
		"--", bwrap,
		"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
		"--cap-drop", "ALL", "--clearenv", "--uid", strconv.Itoa(sandboxUID), "--gid", strconv.Itoa(sandboxUID),
		"--hostname", "sandbox",
		"--ro-bind", root.dir, "/",
		"--proc", "/proc", "--dev", "/dev",
		"--size", strconv.FormatInt(l.ScratchBytes, 10), "--perms", "1777", "--tmpfs", ScratchDir,
		"--ro-bind", filesDir, FilesDir,
	}
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
	return cleanupCgroups()
}
