package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Runsc runs programs under gVisor: `runsc run` with a per-run OCI bundle,
// no network, a dedicated state root and, as root, a per-run cgroup.
// Rootless (runsc --rootless), runsc maps the invoking user to root in a
// user namespace and cannot make cgroups; the limits are then the rlimits
// gVisor's own kernel enforces (ociSpec).
type Runsc struct {
	// Path is the runsc binary; Platform is systrap or ptrace.
	Path, Platform string
	// Flags are extra global flags this runsc version needs.
	Flags []string
	// StateDir holds runsc's --root, the rootfs skeleton and run bundles.
	StateDir string
	// Rootless is set when the server is not root.
	Rootless bool
	// Scope puts a rootless run, gVisor's sentry and gofer included, in a
	// delegated cgroup with its limits; nil without delegation.
	Scope *scope
	root  *rootfs
	mu    sync.Mutex
	// pool holds sandboxes booted ahead (Warm); nil when off.
	pool *warmPool
}

// NewRunsc prepares the state directory of a runsc backend.
func NewRunsc(path, platform, stateDir string, flags []string) (*Runsc, error) {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, err
	}
	root, err := prepareRootfs(stateDir)
	if err != nil {
		return nil, fmt.Errorf("prepare sandbox rootfs: %w", err)
	}
	return &Runsc{Path: path, Platform: platform, Flags: flags, StateDir: stateDir, root: root, Rootless: os.Geteuid() != 0}, nil
}

// Name implements Runner.
func (r *Runsc) Name() string {
	if r.Rootless {
		return "runsc-rootless/" + r.Platform
	}
	return "runsc/" + r.Platform
}

func (r *Runsc) globalArgs() []string {
	args := []string{"--root=" + filepath.Join(r.StateDir, "runsc"), "--platform=" + r.Platform, "--network=none"}
	if r.Rootless {
		args = append(args, "--rootless")
	}
	return append(args, r.Flags...)
}

func (r *Runsc) cgroups() bool { return !r.Rootless }

// Run implements Runner. The run holds the state directory's netns lock
// shared, so that no server removes runsc's network namespace under it.
// A run takes a sandbox booted ahead when the pool has one of its shape
// (Warm), else it boots its own; a run with a Network always boots its
// own (the pool's sandboxes have no proxy socket).
func (r *Runsc) Run(ctx context.Context, req Request) (Result, error) {
	if p := r.warmPool(); p != nil && req.Network == nil {
		cpu := r.warmCPU(req.Limits)
		sh := r.shapeOf(req)
		if job, ok := warmJob(req, cpu); ok && p.serves(sh, req.Env) {
			if w := p.take(sh, cpu); w != nil {
				defer p.refill(w.shape)
				req.Limits = req.Limits.WithDefaults()
				return w.run(ctx, req, job)
			}
		} else if ok {
			p.turnedAway()
		}
	}
	unlock, err := lockNetns(r.StateDir, false)
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	return runWith(ctx, r, r.StateDir, req)
}

// command writes the run's bundle. runsc moves the sandbox into the cgroup
// named in the spec, relative to its own (the server's), which is the
// run's cgroup: the process must not join it itself.
func (r *Runsc) command(id, runDir, filesDir string, req Request, cg *runCgroup) (launch, error) {
	bundle := filepath.Join(runDir, "bundle")
	cgroupsPath := ""
	if cg != nil {
		cgroupsPath = cgroupGroup + "/" + id
	}
	root := r.root
	if req.root != nil {
		root = req.root
	}
	if err := writeBundle(bundle, ociSpec(req, root, filesDir, cgroupsPath, r.Rootless)); err != nil {
		return launch{}, err
	}
	var argv []string
	if r.Scope != nil {
		argv = r.Scope.argv(req.Limits)
	}
	argv = append(append(argv, r.Path), r.globalArgs()...)
	if req.Network != nil {
		// gVisor connects to a host socket only when told to: the run's
		// proxy socket, and with it any socket its read-only binds show
		// (bubblewrap's sandboxes can always reach those).
		argv = append(argv, "--host-uds=open")
	}
	argv = append(argv, "run", "--bundle", bundle, id)
	return launch{argv: argv}, nil
}

func (r *Runsc) stop(id string, _ *runCgroup) { r.kill(id) }

// finish deletes a container `runsc run` did not see exit: it deletes
// the ones that do itself.
func (r *Runsc) finish(id string, s *supervised, killed bool) {
	if killed || s.cmd.ProcessState == nil || !s.cmd.ProcessState.Exited() {
		r.delete(id)
	}
}

func writeBundle(dir string, spec any) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	data, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.json"), data, 0o600)
}

// runsc runs a runsc management command, bounded in time.
func (r *Runsc) runsc(args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, r.Path, append(r.globalArgs(), args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("runsc %s: %w: %s", args[0], err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (r *Runsc) kill(id string) { _ = r.runsc("kill", "--all", id, "KILL") }

func (r *Runsc) delete(id string) { _ = r.runsc("delete", "--force", id) }

// containers lists the container IDs in the state root.
func (r *Runsc) containers() []string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, r.Path, append(r.globalArgs(), "list", "--quiet")...).Output()
	return strings.Fields(string(out))
}

// Cleanup removes what a crashed server left behind: containers in the
// state root, run directories, run cgroups and runsc's network-namespace
// mount.
func (r *Runsc) Cleanup() error {
	for _, id := range r.containers() {
		if isLeftover(id) {
			r.kill(id)
			r.delete(id)
		}
	}
	if err := removeLeftoverRuns(filepath.Join(r.StateDir, "runs")); err != nil {
		return err
	}
	if r.Rootless {
		return nil // no cgroup, and runsc's namespaces live in its own user namespace
	}
	if err := cleanupCgroups(); err != nil {
		return err
	}
	return r.removeNetns()
}

// Close removes the sandboxes booted ahead and runsc's network-namespace
// mount, so that a server that exits cleanly leaves no sandbox and no
// mount in its state directory. Runs must have ended: the server closes
// its backends only after its last call.
func (r *Runsc) Close() error {
	r.swapPool(nil)
	if r.Rootless {
		return nil
	}
	return r.removeNetns()
}

// removeNetns unmounts and removes runsc's null network namespace unless
// a run of a live server (this one or another sharing the state
// directory) holds the netns lock, or a container not left by a dead
// server is listed: runsc creates the file again for the next run.
func (r *Runsc) removeNetns() error {
	unlock, err := lockNetns(r.StateDir, true)
	if errors.Is(err, errBusy) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unlock()
	for _, id := range r.containers() {
		if !isLeftover(id) {
			return nil
		}
	}
	return removeNetnsMount(filepath.Join(r.StateDir, "runsc", nullNetns))
}
