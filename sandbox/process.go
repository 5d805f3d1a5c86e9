package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// runIDPrefix starts every run's ID, container name, cgroup and directory,
// so leftovers of a crash are recognisable. The server's PID follows, so
// that a server cleans only the leftovers of servers that are gone, never
// the live runs of another server sharing the state directory.
const runIDPrefix = "tw-"

func newRunID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s%d-%s", runIDPrefix, os.Getpid(), hex.EncodeToString(b))
}

// isLeftover reports whether id names a run of a server that is gone.
func isLeftover(id string) bool {
	rest, ok := strings.CutPrefix(id, runIDPrefix)
	if !ok {
		return false
	}
	pidText, _, _ := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return false
	}
	return pid != os.Getpid() && syscall.Kill(pid, 0) == syscall.ESRCH
}

// joinCgroupScript makes the process join every cgroup given before "--"
// and then become the command after it, so the command and everything it
// starts are limited from their first instruction. The arguments are data
// to this fixed script, never shell code. A failure to join is reported on
// fd 3, which the command itself never gets: an exit status would be
// indistinguishable from the sandboxed program's own.
const joinCgroupScript = `while [ "$1" != -- ]; do echo $$ > "$1" || { echo "cannot join cgroup $1" >&3; exit 125; }; shift; done; shift; exec 3>&-; exec "$@"`

// writeFiles writes req.Files into a fresh directory dir.
func writeFiles(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if name == "" || filepath.Base(name) != name || name == "." || name == ".." {
			return fmt.Errorf("sandbox file name %q is not a plain name", name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o444); err != nil {
			return err
		}
	}
	return nil
}

// supervised is one sandboxed process being watched for the end of its
// run: exit, timeout, cancellation or output overflow.
type supervised struct {
	cmd            *exec.Cmd
	stdout, stderr *capture
	overflow       chan struct{}
	// setup reads what the cgroup join script reports on failure.
	setup *os.File
}

// newSupervised prepares the launch to run with req's stdin and output
// caps, inside cg when not nil. The launch's files follow the join
// script's report pipe (fd 3) when there is one, else start at fd 3.
func newSupervised(ln launch, cg *runCgroup, req Request) (*supervised, error) {
	s := &supervised{overflow: make(chan struct{}, 2)}
	signal := func() { s.overflow <- struct{}{} }
	s.stdout = newCapture(req.Limits.OutputBytes, signal)
	s.stderr = newCapture(req.Limits.OutputBytes, signal)
	argv := ln.argv
	var extra []*os.File
	if cg != nil {
		args := append([]string{"/bin/sh", "-c", joinCgroupScript, "toolwarden-sandbox"}, cg.procsFiles()...)
		argv = append(append(args, "--"), argv...)
		var report *os.File
		var err error
		if s.setup, report, err = os.Pipe(); err != nil {
			return nil, err
		}
		extra = append(extra, report)
	}
	s.cmd = exec.Command(argv[0], argv[1:]...)
	s.cmd.ExtraFiles = append(extra, ln.files...)
	s.cmd.Env = []string{"PATH=/usr/bin:/bin"}
	s.cmd.Stdin = bytes.NewReader(req.Stdin)
	s.cmd.Stdout, s.cmd.Stderr = s.stdout, s.stderr
	s.cmd.SysProcAttr = groupAttr()
	return s, nil
}

// setupFailure returns what the join script reported, "" when it joined
// (or there was none); it releases the report pipe.
func (s *supervised) setupFailure() string {
	if s.setup == nil {
		return ""
	}
	defer s.setup.Close()
	msg, _ := io.ReadAll(s.setup)
	return strings.TrimSpace(string(msg))
}

// run starts the process and waits for it, calling kill when it must stop
// early; it reports which limit stopped it ("" for a normal exit). The end
// of ctx is a limit too (the caller's deadline or cancellation), so that
// the output so far is returned rather than lost.
func (s *supervised) run(ctx context.Context, timeout time.Duration, kill func()) (string, error) {
	err := s.cmd.Start()
	for _, f := range s.cmd.ExtraFiles {
		f.Close() // the child has its copy; ours would keep the report pipe open
	}
	if err != nil {
		return "", fmt.Errorf("start sandbox: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var reason string
	select {
	case err := <-done:
		return "", exitErr(err)
	case <-timer.C:
		reason = LimitTimeout
	case <-s.overflow:
		reason = LimitOutput
	case <-ctx.Done():
		reason = LimitCanceled
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			reason = LimitTimeout
		}
	}
	kill()
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	err = <-done
	return reason, exitErr(err)
}

// exitErr keeps only errors that are not an exit status.
func exitErr(err error) error {
	var ee *exec.ExitError
	if err == nil || errors.As(err, &ee) {
		return nil
	}
	return err
}

// result collects the outcome of s.
func (s *supervised) result(start time.Time, limit string) Result {
	r := Result{Duration: time.Since(start), Limit: limit, ExitCode: -1}
	r.Stdout, r.StdoutTruncated = s.stdout.bytes()
	r.Stderr, r.StderrTruncated = s.stderr.bytes()
	if ps := s.cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.ExitCode = 128 + int(ws.Signal())
		} else {
			r.ExitCode = ps.ExitCode()
		}
	}
	return r
}

// removeLeftoverRuns removes the run directories of servers that are gone.
func removeLeftoverRuns(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var errs []error
	for _, e := range entries {
		if isLeftover(e.Name()) {
			errs = append(errs, os.RemoveAll(filepath.Join(dir, e.Name())))
		}
	}
	return errors.Join(errs...)
}

// launcher is what differs between backends: the command line of a run,
// how to stop it early, and what to clean up once it is gone.
type launcher interface {
	// command returns how to start run id, whose request files are in
	// filesDir; cg is the run's cgroup, nil when the backend runs without.
	command(id, runDir, filesDir string, req Request, cg *runCgroup) (launch, error)
	// stop kills run id before it ends on its own.
	stop(id string, cg *runCgroup)
	// finish runs once the process is gone; killed says whether stop ran.
	finish(id string, s *supervised, killed bool)
	// cgroups says whether runs get a cgroup made by toolwarden (root).
	cgroups() bool
}

// launch is how one run starts.
type launch struct {
	argv []string
	// join says the process joins the run's cgroup itself before it
	// becomes argv.
	join bool
	// files are passed from fd 3 (after the join report pipe, if any);
	// they are closed once the process started.
	files []*os.File
}

// runWith is a run under any backend: its files, its cgroup (created
// first, so that it stays ours to read and remove), supervision, and how
// it ended. Nothing of the run is left when it returns.
func runWith(ctx context.Context, l launcher, stateDir string, req Request) (Result, error) {
	req.Limits = req.Limits.WithDefaults()
	id := newRunID()
	runDir := filepath.Join(stateDir, "runs", id)
	defer os.RemoveAll(runDir)
	filesDir := filepath.Join(runDir, "files")
	if err := writeFiles(filesDir, req.Files); err != nil {
		return Result{}, err
	}
	var cg *runCgroup
	if l.cgroups() {
		var err error
		if cg, err = newRunCgroup(id, req.Limits); err != nil {
			return Result{}, err
		}
		defer cg.remove()
	}
	ln, err := l.command(id, runDir, filesDir, req, cg)
	if err != nil {
		return Result{}, err
	}
	joined := cg
	if !ln.join {
		joined = nil
	}
	s, err := newSupervised(ln, joined, req)
	if err != nil {
		closeAll(ln.files)
		return Result{}, err
	}
	start := time.Now()
	killed := false
	limit, err := s.run(ctx, req.Limits.Timeout, func() { killed = true; l.stop(id, cg) })
	l.finish(id, s, killed)
	failure := s.setupFailure()
	if err != nil {
		return Result{}, err
	}
	if failure != "" {
		return Result{}, fmt.Errorf("sandbox set-up failed: %s", failure)
	}
	res := s.result(start, limit)
	if res.Limit == "" && cg != nil {
		res.Limit = cg.hit()
	}
	return res, nil
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}
