package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
)

// The commands that only report what the sandbox would be (`toolwarden
// tools`, `config check`) need Detect's outcome, not a sandbox: its probe
// boots one (~200 ms). DetectCached keeps that outcome per machine and
// reuses it while a cheap fingerprint of everything it depends on holds:
// the runtimes' binaries (path, size, mtime, inode), toolwarden's own, the
// kernel release and boot, the user, cgroup v2 and systemd-run, and the
// options. Any change, or a cache file that is not plainly this user's
// own, and the probe runs again.

// probeCacheVersion changes when what a record means changes.
const probeCacheVersion = "1"

// probeRecord is one cached outcome of Detect. It names a candidate and
// the facts the probe found, never a command line: nothing in the file
// can add a flag to a runtime.
type probeRecord struct {
	Fingerprint string `json:"fingerprint"`
	// Backend is "runsc" or "bwrap", empty when none worked.
	Backend string `json:"backend,omitempty"`
	// Platform is runsc's: "systrap" or "ptrace".
	Platform string `json:"platform,omitempty"`
	// Overlay2 says the runsc build takes --overlay2=none (runscFlags).
	Overlay2 bool `json:"overlay2,omitempty"`
	// Scope says a rootless run gets a delegated cgroup scope (findScope).
	Scope bool `json:"scope,omitempty"`
	// Err is why no backend worked, as Detect said it.
	Err string `json:"err,omitempty"`
}

// maxProbeRecord bounds what is read of a cache file.
const maxProbeRecord = 64 << 10

// DetectCached is Detect with its outcome cached in dir (created 0700),
// for commands that run nothing in the sandbox: a runner from the cache
// has not cleaned an earlier crash's leftovers (Detect does). cached
// reports that the probe did not run. A cache that cannot be read or
// written is not an error: the probe runs.
func DetectCached(ctx context.Context, opt DetectOptions, dir string) (r Runner, cached bool, err error) {
	fp, err := probeFingerprint(opt)
	if err != nil {
		r, err = Detect(ctx, opt)
		return r, false, err
	}
	path := filepath.Join(dir, "probe-"+probeKey(opt)+".json")
	if rec, ok := readProbeRecord(dir, path); ok && rec.Fingerprint == fp {
		if r, err := rec.outcome(opt); !errors.Is(err, errStale) {
			return r, true, err
		}
	}
	r, err = Detect(ctx, opt)
	if rec, ok := recordOf(r, err); ok {
		rec.Fingerprint = fp
		_ = writeProbeRecord(dir, path, rec)
	}
	return r, false, err
}

// probeKey names the cache file of opt: one file per set of options.
func probeKey(opt DetectOptions) string {
	sum := sha256.Sum256([]byte(opt.Backend + "\x00" + opt.RunscPath + "\x00" + opt.BwrapPath + "\x00" + opt.StateDir))
	return hex.EncodeToString(sum[:8])
}

// probeFingerprint is what Detect's outcome depends on, read cheaply: no
// process is started.
func probeFingerprint(opt DetectOptions) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "v%s\x00%q\x00uid %d gid %d\x00", probeCacheVersion, opt, os.Geteuid(), os.Getegid())
	for _, f := range []string{"/proc/sys/kernel/osrelease", "/proc/sys/kernel/random/boot_id"} {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		b.Write(data)
	}
	runsc, _ := findProgram(opt.RunscPath, "runsc")
	bwrap, _ := findProgram(opt.BwrapPath, "bwrap")
	prlimit, _ := exec.LookPath("prlimit")
	systemdRun, _ := exec.LookPath("systemd-run")
	for _, p := range []string{self, runsc, bwrap, prlimit, systemdRun, cgroupRoot + "/cgroup.controllers"} {
		b.WriteString(fileStamp(p))
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:]), nil
}

// fileStamp is path with its size, mtime and inode, or that it is absent.
func fileStamp(path string) string {
	fi, err := os.Stat(path)
	if path == "" || err != nil {
		return "\x00" + path + " absent"
	}
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	return fmt.Sprintf("\x00%s %d %d %d", path, fi.Size(), fi.ModTime().UnixNano(), ino)
}

// readProbeRecord reads path when it and dir are this user's alone (owned
// by the effective user, writable by nobody else) and it holds a record
// with known fields only; ok is false otherwise.
func readProbeRecord(dir, path string) (probeRecord, bool) {
	var rec probeRecord
	if !ownedAlone(dir, true) || !ownedAlone(path, false) {
		return rec, false
	}
	f, err := os.Open(path)
	if err != nil {
		return rec, false
	}
	defer f.Close()
	data := make([]byte, maxProbeRecord+1)
	n, _ := f.Read(data)
	if n > maxProbeRecord {
		return rec, false
	}
	dec := json.NewDecoder(bytes.NewReader(data[:n]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil || dec.More() {
		return rec, false
	}
	return rec, true
}

// ownedAlone reports whether path (a directory when dir) is owned by the
// effective user and writable by no group or other user; it is not
// followed if it is a symbolic link.
func ownedAlone(path string, dir bool) bool {
	fi, err := os.Lstat(path)
	if err != nil || fi.IsDir() != dir || (!dir && !fi.Mode().IsRegular()) || fi.Mode().Perm()&0o022 != 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// errStale says a record cannot be used: the probe must run.
var errStale = errors.New("probe record unusable")

// outcome is the runner (or error) rec says Detect found, built as Detect
// builds it but without starting anything; errStale when rec names no
// known candidate or the runner cannot be built.
func (rec probeRecord) outcome(opt DetectOptions) (Runner, error) {
	if rec.Backend == "" {
		if rec.Err == "" {
			return nil, errStale
		}
		return nil, fmt.Errorf("%w: %s", ErrNoBackend, rec.Err)
	}
	if rec.Err != "" || !slices.Contains(acceptedBackends(opt.Backend), rec.Backend) {
		return nil, errStale
	}
	var sc *scope
	if rec.Scope {
		path, err := exec.LookPath("systemd-run")
		if err != nil {
			return nil, errStale
		}
		sc = &scope{path: path}
	}
	switch rec.Backend {
	case "runsc":
		if rec.Platform != "systrap" && rec.Platform != "ptrace" {
			return nil, errStale
		}
		path, err := findProgram(opt.RunscPath, "runsc")
		if err != nil {
			return nil, errStale
		}
		var flags []string
		if rec.Overlay2 {
			flags = []string{"--overlay2=none"}
		}
		rs, err := NewRunsc(path, rec.Platform, filepath.Join(opt.StateDir, "runsc-"+rec.Platform), flags)
		if err != nil || (sc != nil && !rs.Rootless) {
			return nil, errStale
		}
		rs.Scope = sc
		return &fromCache{Runner: rs}, nil
	default: // bwrap
		if rec.Platform != "" || rec.Overlay2 {
			return nil, errStale
		}
		path, err := findProgram(opt.BwrapPath, "bwrap")
		if err != nil {
			return nil, errStale
		}
		prlimit, err := exec.LookPath("prlimit")
		if err != nil {
			return nil, errStale
		}
		b, err := NewBwrap(path, prlimit, filepath.Join(opt.StateDir, "bwrap"))
		if err != nil || (sc != nil && !b.Rootless) {
			return nil, errStale
		}
		b.Scope = sc
		return &fromCache{Runner: b}, nil
	}
}

// acceptedBackends are the backends the option lets Detect try.
func acceptedBackends(backend string) []string {
	switch backend {
	case "", "auto":
		return []string{"runsc", "bwrap"}
	}
	return []string{backend}
}

// recordOf is the record of Detect's outcome; ok is false for an outcome
// not worth keeping (the context ended, an unknown runner).
func recordOf(r Runner, err error) (probeRecord, bool) {
	switch r := r.(type) {
	case nil:
		if msg, found := cutNoBackend(err); found {
			return probeRecord{Err: msg}, true
		}
	case *Runsc:
		return probeRecord{Backend: "runsc", Platform: r.Platform, Overlay2: slices.Contains(r.Flags, "--overlay2=none"), Scope: r.Scope != nil}, err == nil
	case *Bwrap:
		return probeRecord{Backend: "bwrap", Scope: r.Scope != nil}, err == nil
	}
	return probeRecord{}, false
}

// cutNoBackend is the reason of Detect's ErrNoBackend error.
func cutNoBackend(err error) (string, bool) {
	if err == nil || !errors.Is(err, ErrNoBackend) {
		return "", false
	}
	msg, found := strings.CutPrefix(err.Error(), ErrNoBackend.Error()+": ")
	return msg, found && msg != ""
}

// writeProbeRecord writes rec to path through a temporary file renamed
// over it, so that a reader sees a whole record or none.
func writeProbeRecord(dir, path string, rec probeRecord) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if !ownedAlone(dir, true) {
		return fmt.Errorf("probe cache %s: not owned by uid %d alone", dir, os.Geteuid())
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// fromCache is a runner built from a probe record. Its Close closes the
// backend only if it was used: closing runsc cleans the state directory's
// network namespace, which lists containers (a runsc process, ~25 ms), and
// a command that ran nothing has nothing to clean.
type fromCache struct {
	Runner
	ran atomic.Bool
}

// Run implements Runner.
func (c *fromCache) Run(ctx context.Context, req Request) (Result, error) {
	c.ran.Store(true)
	return c.Runner.Run(ctx, req)
}

// Unwrap is the backend, for WarmerOf.
func (c *fromCache) Unwrap() Runner { return c.Runner }

// Enforcement implements Enforcer.
func (c *fromCache) Enforcement() Enforcement { return EnforcementOf(c.Runner) }

// Close closes the backend if it ran anything or kept a pool.
func (c *fromCache) Close() error {
	w, warmer := WarmerOf(c.Runner)
	used := c.ran.Load() || warmer && w.WarmStats() != WarmStats{}
	if cl, ok := c.Runner.(io.Closer); ok && used {
		return cl.Close()
	}
	return nil
}
