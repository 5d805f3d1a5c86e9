package upstream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/sandbox"
)

// proc is the process of a command upstream, sandboxed or not: its
// streams, how to kill it and how it ended.
type proc struct {
	stdin          io.WriteCloser
	stdout, stderr io.Reader
	kill           func()
	// done is closed once the process ended and its traces are gone.
	done chan struct{}
	// ended says how, once done is closed.
	ended string
	limit *lineLimit
	tail  *tail
	// outputs are closed once the process is stopped: a reader still
	// blocked on them (a child that escaped holding them) is let go.
	outputs []io.Closer
}

// stop kills the process, waits for it and closes its outputs.
func (p *proc) stop() {
	p.kill()
	<-p.done
	for _, c := range p.outputs {
		c.Close()
	}
}

// reason says why the process ended: its message too large, or its exit
// and the last lines of its stderr.
func (p *proc) reason() string {
	if err := p.limit.exceeded(); err != nil {
		return err.Error()
	}
	select {
	case <-p.done:
	default:
		return "its output ended"
	}
	msg := p.ended
	if t := p.tail.String(); t != "" {
		msg += "; its last stderr: " + t
	}
	return msg
}

// SandboxHome is HOME in a sandboxed upstream: its scratch directory,
// never the server's home.
const SandboxHome = sandbox.ScratchDir

// sandboxPath is PATH in a sandboxed upstream: the system's programs,
// which are all the sandbox shows besides the mounts.
const sandboxPath = "/usr/local/bin:/usr/bin:/bin"

// newDialer says how to make a session of u: a process started in the
// sandbox or, with sandbox: false, as toolwarden; or a connection to its
// URL over streamable HTTP or SSE.
func newDialer(u configs.Upstream, opts Options) (dialer, error) {
	if u.URL != "" {
		return httpDialer(u, opts)
	}
	if u.Sandboxed() && opts.Sandbox == nil {
		return nil, errors.New("sandbox: no sandbox backend to run it in (sandbox: true, the default, needs one: see docs/sandboxing.md)")
	}
	if u.Sandboxed() {
		if err := checkMounts(u, opts.Getenv); err != nil {
			return nil, err
		}
	}
	return func(ctx context.Context) (*session, error) {
		start := startLocal
		if u.Sandboxed() {
			start = startSandboxed
		}
		p, err := start(ctx, u, opts)
		if err != nil {
			return nil, fmt.Errorf("start: %w", err)
		}
		return p.session(u, opts.Log), nil
	}, nil
}

// checkMounts refuses a mount that would show the server's home to the
// upstream: the home itself or a directory holding it.
func checkMounts(u configs.Upstream, getenv Env) error {
	home := getenv("HOME")
	for i, m := range u.Mounts {
		if home != "" && home != "/" && (m == home || strings.HasPrefix(home, m+"/")) {
			return fmt.Errorf("mounts[%d]: %q would show the server's home %s to the upstream; mount the package's own directory", i, m, home)
		}
	}
	return nil
}

// session wraps the process's pipes in an MCP stdio transport whose
// messages are capped (lineLimit), behind stdioCalls.
func (p *proc) session(u configs.Upstream, log *slog.Logger) *session {
	p.limit = &lineLimit{r: p.stdout, max: maxMessageBytes(u), over: p.kill}
	p.tail = &tail{}
	go p.tail.drain(p.stderr, u.Name, log)
	calls, out, in := newStdioCalls(p.limit, p.stdin)
	return &session{t: transport.NewIO(out, in, nil), proc: p, calls: calls}
}

// startSandboxed starts u's command in the sandbox, with the workspace
// and u's mounts, read-only, and a network only if one is given.
func startSandboxed(ctx context.Context, u configs.Upstream, opts Options) (*proc, error) {
	vars, err := Environ(ctx, u, opts)
	if err != nil {
		return nil, err
	}
	env := append([]string{"PATH=" + sandboxPath, "HOME=" + SandboxHome}, vars[1:]...)
	if opts.Network != nil {
		env = append(env, opts.NetworkEnv...)
	}
	sp, err := opts.Sandbox.Start(ctx, sandbox.StartRequest{Argv: u.Command, Env: env, Workspace: opts.Workspace,
		WorkspaceWritable: opts.WorkspaceWritable, Mounts: u.Mounts, Limits: opts.Limits, Network: opts.Network})
	if err != nil {
		return nil, err
	}
	p := &proc{stdin: sp.Stdin, stdout: sp.Stdout, stderr: sp.Stderr, kill: sp.Kill, done: make(chan struct{}),
		outputs: []io.Closer{sp.Stdout, sp.Stderr}}
	go func() {
		err := sp.Wait()
		p.ended = fmt.Sprintf("its process ended with status %d", sp.ExitCode())
		if l := sp.Limit(); l != "" {
			p.ended += " at the sandbox's " + l + " limit"
		}
		if err != nil {
			p.ended += " (" + err.Error() + ")"
		}
		close(p.done)
	}()
	return p, nil
}

// startLocal starts u's command unsandboxed (sandbox: false) with only
// the environment Environ gives it, in a process group of its own.
func startLocal(ctx context.Context, u configs.Upstream, opts Options) (*proc, error) {
	env, err := Environ(ctx, u, opts)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(u.Command[0], u.Command[1:]...)
	cmd.Env = env // only these: never toolwarden's own environment
	cmd.Dir = os.TempDir()
	cmd.SysProcAttr = localProcAttr()
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeFiles(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeFiles(inR, inW, outR, outW)
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = cmd.Start()
	closeFiles(inR, outW, errW) // the child's ends
	if err != nil {
		closeFiles(inW, outR, errR)
		return nil, err
	}
	p := &proc{stdin: inW, stdout: outR, stderr: errR, done: make(chan struct{}), outputs: []io.Closer{outR, errR}}
	var once sync.Once
	p.kill = func() { once.Do(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }) }
	go func() {
		_ = cmd.Wait()
		p.ended = "its process ended: " + cmd.ProcessState.String()
		close(p.done)
	}()
	return p, nil
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// tail logs an upstream's stderr and keeps its last lines, which say why
// it ended. A line is cut at maxStderrLine bytes.
type tail struct {
	mu    sync.Mutex
	lines []string
}

const (
	maxStderrLine  = 1 << 10
	stderrTailSize = 3
)

func (t *tail) drain(r io.Reader, upstream string, log *slog.Logger) {
	br := bufio.NewReaderSize(r, maxStderrLine)
	for {
		line, isPrefix, err := br.ReadLine()
		if len(line) > 0 || err == nil {
			text := string(line)
			log.Debug("upstream stderr", "upstream", upstream, "line", text)
			t.mu.Lock()
			t.lines = append(t.lines, text)
			if len(t.lines) > stderrTailSize {
				t.lines = t.lines[1:]
			}
			t.mu.Unlock()
			for isPrefix && err == nil { // the rest of an over-long line
				_, isPrefix, err = br.ReadLine()
			}
		}
		if err != nil {
			return
		}
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, " | ")
}
