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
	// done receives the process's end once started.
	done chan error
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

// run starts the process and waits for it (start, then wait).
func (s *supervised) run(ctx context.Context, timeout time.Duration, kill func()) (string, error) {
	if err := s.start(); err != nil {
		return "", err
	}
	return s.wait(ctx, timeout, kill)
}

// start starts the process and a goroutine that waits for it; the launch's
// files are closed, the child having its copies.
func (s *supervised) start() error {
	err := s.cmd.Start()
	for _, f := range s.cmd.ExtraFiles {
		f.Close() // the child has its copy; ours would keep the report pipe open
	}
	if err != nil {
		return fmt.Errorf("start sandbox: %w", err)
	}
	s.done = make(chan error, 1)
	go func() { s.done <- s.cmd.Wait() }()
	return nil
}

// exited reports whether the started process has already ended, without
// waiting; a warm sandbox that did is not handed a run.
func (s *supervised) exited() bool {
	select {
	case err := <-s.done:
		s.done <- err
		return true
	default:
		return false
	}
}

// wait waits for the started process, calling kill when it must stop
// early; it reports which limit stopped it ("" for a normal exit). The end
// of ctx is a limit too (the caller's deadline or cancellation), so that
// the output so far is returned rather than lost. The timeout counts from
// the call.
func (s *supervised) wait(ctx context.Context, timeout time.Duration, kill func()) (string, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var reason string
	select {
	case err := <-s.done:
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
	err := <-s.done
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
	p, err := prepare(l, stateDir, req)
	if err != nil {
		return Result{}, err
	}
	defer p.remove()
	if err := p.s.start(); err != nil {
		return Result{}, err
	}
	return p.supervise(ctx, req)
}

// prepared is a run set up and not yet supervised: its directories, its
// cgroup and its process, started or not.
type prepared struct {
	l                    launcher
	id, runDir, filesDir string
	cg                   *runCgroup
	s                    *supervised
	// net is the run's way out, nil without Request.Network.
	net *netRun
}

// prepare writes req's files and bundle, creates its cgroup and the
// process that will run it. req.Limits must have its defaults.
func prepare(l launcher, stateDir string, req Request) (*prepared, error) {
	p := &prepared{l: l, id: newRunID()}
	p.runDir = filepath.Join(stateDir, "runs", p.id)
	p.filesDir = filepath.Join(p.runDir, "files")
	if err := writeFiles(p.filesDir, req.Files); err != nil {
		p.remove()
		return nil, err
	}
	if req.Network != nil {
		var err error
		if p.net, err = openNetwork(p.runDir, req.Network); err != nil {
			p.remove()
			return nil, err
		}
		req.Env = netEnv(req.Env, len(req.Network.CACertPEM) > 0)
		req.Argv = netArgv(req.Argv)
		req.netMounts = append(req.netMounts, p.net.mounts()...)
	}
	if l.cgroups() {
		var err error
		if p.cg, err = newRunCgroup(p.id, req.Limits); err != nil {
			p.remove()
			return nil, err
		}
	}
	ln, err := l.command(p.id, p.runDir, p.filesDir, req, p.cg)
	if err != nil {
		p.remove()
		return nil, err
	}
	joined := p.cg
	if !ln.join {
		joined = nil
	}
	if p.s, err = newSupervised(ln, joined, req); err != nil {
		closeAll(ln.files)
		p.remove()
		return nil, err
	}
	return p, nil
}

// remove deletes the run's directory and cgroup; its process must be gone.
func (p *prepared) remove() {
	p.net.close()
	os.RemoveAll(p.runDir)
	if p.cg != nil {
		p.cg.remove()
	}
}

// supervise waits for the started run under req's limits and says how it
// ended.
func (p *prepared) supervise(ctx context.Context, req Request) (Result, error) {
	start := time.Now()
	killed := false
	limit, err := p.s.wait(ctx, req.Limits.Timeout, func() { killed = true; p.l.stop(p.id, p.cg) })
	p.l.finish(p.id, p.s, killed)
	failure := p.s.setupFailure()
	if err != nil {
		return Result{}, err
	}
	if failure != "" {
		return Result{}, fmt.Errorf("sandbox set-up failed: %s", failure)
	}
	res := p.s.result(start, limit)
	if res.Limit == "" && p.cg != nil {
		res.Limit = p.cg.hit()
	}
	return res, nil
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}
