package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// A Starter starts a long-lived program in a sandbox and hands back its
// standard streams, for a program that is spoken to rather than run once:
// a local MCP server (tools/upstream). The isolation is Run's: the same
// namespaces, read-only root, workspace mount, limits (memory, pids, cpu,
// rlimits) and, without a Network, no network at all. What differs: no
// wall-clock timeout and no output cap (the caller reads the streams and
// bounds what it reads), and read-only Mounts of host directories.
type Starter interface {
	Start(ctx context.Context, req StartRequest) (*Process, error)
}

// StartRequest is one long-lived program to start.
type StartRequest struct {
	// Argv is the program and its arguments, as seen inside the sandbox.
	Argv []string
	// Env is the whole environment of the program (KEY=VALUE).
	Env []string
	// Workspace is the host directory mounted at WorkspaceDir (none if
	// empty), read-only unless WorkspaceWritable.
	Workspace         string
	WorkspaceWritable bool
	// Mounts are host directories bound read-only at the same path inside
	// (a program's installed package, say); see CheckMount.
	Mounts []string
	// Limits bound the process; Timeout and OutputBytes do not apply.
	Limits Limits
	// Network is the process's only way out, as for Run; nil means none.
	Network *Network
}

// processCPUWindow stands for the timeout a long-lived process does not
// have where a limit is derived from one: rootless without a cgroup,
// RLIMIT_CPU is this window times the CPUs.
const processCPUWindow = 24 * time.Hour

// fixedDirs are the sandbox's own paths: a mount may be neither one of
// them, nor inside one, nor hold one. Inside ScratchDir is allowed (the
// mount lies over the process's scratch tmpfs), ScratchDir itself not.
var fixedDirs = []string{"/proc", "/dev", WorkspaceDir, "/run", "/etc", CacheDir, "/usr",
	"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// CheckMount says why the host directory dir cannot be a read-only mount
// of a started process, nil when it can: it must be absolute and clean,
// outside the sandbox's own paths, and, once the process starts, an
// existing directory reached through no symlink.
func CheckMount(dir string) error {
	if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir {
		return fmt.Errorf("mount %q: must be an absolute, clean path", dir)
	}
	if dir == "/" {
		return fmt.Errorf("mount %q: the whole host file system is never mounted", dir)
	}
	for _, f := range fixedDirs {
		if within(dir, f) || within(f, dir) {
			return fmt.Errorf("mount %q: overlaps the sandbox's own %s", dir, f)
		}
	}
	if within(ScratchDir, dir) {
		return fmt.Errorf("mount %q: would hide the sandbox's scratch %s", dir, ScratchDir)
	}
	return nil
}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// checkMountOnHost is CheckMount plus what only the host can say.
func checkMountOnHost(dir string) error {
	if err := CheckMount(dir); err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("mount %q: %w", dir, err)
	}
	if real != dir {
		return fmt.Errorf("mount %q: goes through a symlink (to %s); name the directory itself", dir, real)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("mount %q: is not a directory", dir)
	}
	return nil
}

// Process is a started sandboxed program. Its streams are pipes; Wait
// waits for it and removes every trace of it, Kill ends it.
type Process struct {
	Stdin  io.WriteCloser
	Stdout io.ReadCloser
	Stderr io.ReadCloser

	p           *prepared
	in          *os.File
	out, errOut *os.File
	child       []*os.File
	release     func()
	killOnce    sync.Once
	killed      atomic.Bool
	limit       string
	waitOnce    sync.Once
	waitErr     error
}

// Start implements Starter.
func (r *Runsc) Start(ctx context.Context, req StartRequest) (*Process, error) {
	unlock, err := lockNetns(r.StateDir, false)
	if err != nil {
		return nil, err
	}
	p, err := startWith(ctx, r, r.StateDir, req)
	if err != nil {
		unlock()
		return nil, err
	}
	p.release = unlock
	return p, nil
}

// Start implements Starter.
func (b *Bwrap) Start(ctx context.Context, req StartRequest) (*Process, error) {
	return startWith(ctx, b, b.StateDir, req)
}

// startWith prepares req as a run of l (its directories, cgroup and
// bundle), gives the process pipes instead of captured output and starts
// it. ctx bounds the start only.
func startWith(ctx context.Context, l launcher, stateDir string, sr StartRequest) (*Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, m := range sr.Mounts {
		if err := checkMountOnHost(m); err != nil {
			return nil, err
		}
	}
	req := Request{Argv: sr.Argv, Env: sr.Env, Workspace: sr.Workspace, WorkspaceWritable: sr.WorkspaceWritable,
		Limits: sr.Limits, Network: sr.Network}
	req.Limits.Timeout = processCPUWindow
	req.Limits = req.Limits.WithDefaults()
	mounts := slices.Sorted(slices.Values(sr.Mounts))
	// Mount points inside the scratch tmpfs are made by the runtime;
	// others need a skeleton of their own.
	points := slices.DeleteFunc(slices.Clone(mounts), func(m string) bool { return within(m, ScratchDir) })
	if len(points) > 0 {
		root, err := prepareRootfsWith(stateDir, points)
		if err != nil {
			return nil, fmt.Errorf("prepare sandbox rootfs: %w", err)
		}
		req.root = root
	}
	for _, m := range mounts {
		req.netMounts = append(req.netMounts, bindMount{m, m})
	}
	p, err := prepare(l, stateDir, req)
	if err != nil {
		return nil, err
	}
	proc, err := p.pipes()
	if err != nil {
		closeAll(p.s.cmd.ExtraFiles)
		p.remove()
		return nil, err
	}
	err = p.s.start()
	proc.closeChildEnds()
	if err != nil {
		closeAll([]*os.File{proc.in, proc.out, proc.errOut})
		p.remove()
		return nil, err
	}
	return proc, nil
}

// pipes replaces the prepared run's captured streams by pipes. The
// child's ends are closed once it started (childEnds), so that a reader
// sees the end of the stream when the sandbox is gone.
func (p *prepared) pipes() (*Process, error) {
	proc := &Process{p: p}
	var ends [3][2]*os.File
	for i := range ends {
		r, w, err := os.Pipe()
		if err != nil {
			for _, e := range ends[:i] {
				closeAll(e[:])
			}
			return nil, err
		}
		ends[i] = [2]*os.File{r, w}
		if i == 0 {
			proc.child = append(proc.child, r) // stdin: the child reads
		} else {
			proc.child = append(proc.child, w)
		}
	}
	proc.in, proc.out, proc.errOut = ends[0][1], ends[1][0], ends[2][0]
	cmd := p.s.cmd
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ends[0][0], ends[1][1], ends[2][1]
	proc.Stdin, proc.Stdout, proc.Stderr = proc.in, proc.out, proc.errOut
	return proc, nil
}

// closeChildEnds closes this process's copies of the child's ends.
func (p *Process) closeChildEnds() { closeAll(p.child) }

// Kill ends the process and everything it started; Wait still must be
// called (it removes the run's traces).
func (p *Process) Kill() {
	p.killOnce.Do(func() {
		p.killed.Store(true)
		p.p.l.stop(p.p.id, p.p.cg)
		_ = syscall.Kill(-p.p.s.cmd.Process.Pid, syscall.SIGKILL)
	})
}

// Wait waits for the process to end, then removes its bundle, cgroup and
// directories. It returns nil for any exit status (ExitCode says which),
// an error when the sandbox itself failed to set up. Safe to call more
// than once and from several goroutines.
func (p *Process) Wait() error {
	p.waitOnce.Do(func() {
		err := <-p.p.s.done
		p.p.s.done <- err
		p.p.l.finish(p.p.id, p.p.s, p.killed.Load())
		failure := p.p.s.setupFailure()
		if p.p.cg != nil {
			p.limit = p.p.cg.hit()
		}
		p.p.remove()
		if p.release != nil {
			p.release()
		}
		p.waitErr = exitErr(err)
		if p.waitErr == nil && failure != "" {
			p.waitErr = errors.New("sandbox set-up failed: " + failure)
		}
	})
	return p.waitErr
}

// ExitCode is the process's exit status once Wait returned, 128+N when
// killed by signal N, -1 when it is unknown.
func (p *Process) ExitCode() int {
	return p.p.s.result(time.Now(), "").ExitCode
}

// Limit names the cgroup limit the process hit (memory, pids), "" for
// none or without a cgroup; meaningful once Wait returned.
func (p *Process) Limit() string { return p.limit }
