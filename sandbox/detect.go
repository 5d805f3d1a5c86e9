package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolwarden/toolwarden/internal/outersandbox"
)

// DetectOptions say where to look for a sandbox runtime.
type DetectOptions struct {
	// Backend is "auto" (runsc, then bwrap), "runsc" or "bwrap".
	Backend string
	// RunscPath and BwrapPath override the search; empty means look in
	// the toolwarden cache (where scripts/sandbox-setup installs a current
	// runsc) and then on PATH.
	RunscPath, BwrapPath string
	// StateDir holds the runtimes' state, the rootfs and run bundles.
	StateDir string
}

// probeTimeout bounds the real run that proves a backend works.
const probeTimeout = 10 * time.Second

// ErrNoBackend is returned by Detect when no backend works; the message
// says why each candidate failed.
var ErrNoBackend = errors.New("no working sandbox backend")

// Cleaner removes what a crashed server left behind.
type Cleaner interface{ Cleanup() error }

// Detect finds the first sandbox backend that runs /usr/bin/true, cleans
// the leftovers of an earlier crash in its state, and returns it. There is
// no unsandboxed mode: with no working backend, Detect fails. As root,
// runs get cgroups and run as nobody; as an ordinary user, the backends
// run rootless (see Runsc and Bwrap), and Enforcement says what that
// changes.
func Detect(ctx context.Context, opt DetectOptions) (Runner, error) {
	var why []string
	for _, c := range candidates(ctx, opt) {
		r, err := c()
		if err == nil {
			err = probe(ctx, r)
		}
		if err != nil {
			if cl, ok := r.(io.Closer); ok {
				_ = cl.Close() // a failed probe may still have mounted something
			}
			why = append(why, err.Error())
			continue
		}
		if cl, ok := r.(Cleaner); ok {
			if err := cl.Cleanup(); err != nil {
				return nil, fmt.Errorf("clean sandbox leftovers: %w", err)
			}
		}
		return r, nil
	}
	err := fmt.Errorf("%w: %s", ErrNoBackend, strings.Join(why, "; "))
	if outer, ok := outersandbox.Detect(os.Getenv); ok {
		err = fmt.Errorf("%w; toolwarden itself runs inside %s: %s", err, outer.Name, outer.Nested)
	}
	return nil, err
}

// candidates lists the backends to try, in order of preference.
func candidates(ctx context.Context, opt DetectOptions) []func() (Runner, error) {
	var out []func() (Runner, error)
	if opt.Backend == "" || opt.Backend == "auto" || opt.Backend == "runsc" {
		path, err := findProgram(opt.RunscPath, "runsc")
		var flags []string
		if err == nil {
			flags = runscFlags(path)
		}
		for _, platform := range []string{"systrap", "ptrace"} {
			out = append(out, func() (Runner, error) {
				if err != nil {
					return nil, fmt.Errorf("runsc: %w", err)
				}
				r, err := NewRunsc(path, platform, filepath.Join(opt.StateDir, "runsc-"+platform), flags)
				if err != nil {
					return nil, err
				}
				if r.Rootless {
					r.Scope, _ = findScope(ctx)
				}
				return r, nil
			})
		}
	}
	if opt.Backend == "" || opt.Backend == "auto" || opt.Backend == "bwrap" {
		out = append(out, func() (Runner, error) {
			path, err := findProgram(opt.BwrapPath, "bwrap")
			if err != nil {
				return nil, fmt.Errorf("bwrap: %w", err)
			}
			prlimit, err := exec.LookPath("prlimit")
			if err != nil {
				return nil, fmt.Errorf("bwrap: prlimit (util-linux) not found: %w", err)
			}
			b, err := NewBwrap(path, prlimit, filepath.Join(opt.StateDir, "bwrap"))
			if err != nil {
				return nil, err
			}
			if b.Rootless {
				b.Scope, _ = findScope(ctx)
			}
			return b, nil
		})
	}
	return out
}

// findProgram resolves an explicit path, else the toolwarden cache, else PATH.
func findProgram(explicit, name string) (string, error) {
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", err
		}
		return explicit, nil
	}
	if dir, err := os.UserCacheDir(); err == nil {
		p := filepath.Join(dir, "toolwarden", "bin", name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return exec.LookPath(name)
}

// runscFlags are the global flags a runsc build supports that tighten or
// speed up runs: no overlay over the (read-only) root.
func runscFlags(path string) []string {
	out, _ := exec.Command(path, "flags").CombinedOutput()
	if strings.Contains(string(out), "overlay2") {
		return []string{"--overlay2=none"}
	}
	return nil
}

// probe proves r runs a program.
func probe(ctx context.Context, r Runner) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	res, err := r.Run(ctx, Request{Argv: []string{"/usr/bin/true"}, Limits: Limits{Timeout: probeTimeout}})
	switch {
	case err != nil:
		return fmt.Errorf("%s: probe failed: %w", r.Name(), err)
	case res.ExitCode != 0:
		return fmt.Errorf("%s: probe exited %d (limit %q): %s", r.Name(), res.ExitCode, res.Limit, strings.TrimSpace(string(res.Stderr)))
	}
	return nil
}
