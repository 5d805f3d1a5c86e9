// Package exec holds the sandboxed execution tools: run_script runs a
// python, bash or go script the model wrote, run_command one program from
// the operator's allowlist. Both run only through a sandbox.Runner; there
// is no unsandboxed path.
package exec

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools"
)

// Set holds what the exec tools share.
type Set struct {
	runner    sandbox.Runner
	cfg       configs.Exec
	workspace string
	// interpreters maps each interpreter this machine can run to how it
	// runs; Bind fills it.
	interpreters map[string]interpreter
	bound        bool
	// warm boots and empties the sandbox's pool (KeepWarm); nil: none.
	warm *warmth
	// network gives a run its way out (WithNetwork); nil: none.
	network NetworkFunc
}

// New returns the exec tools of cfg over the workspace directory ws,
// defined from the config alone: run_script offers every enabled
// interpreter, whatever this machine has. Bind attaches the sandbox before
// any call.
func New(cfg configs.Exec, ws string) *Set {
	return &Set{cfg: cfg, workspace: ws}
}

// Bind attaches the sandbox runner and the Go toolchain (env) and looks up
// which enabled interpreters this machine can run: once bound, run_script
// offers only those. It is called once, before the server serves, and
// returns s.
func (s *Set) Bind(runner sandbox.Runner, env Toolchain) *Set {
	s.runner, s.interpreters, s.bound = runner, interpreters(s.cfg.Interpreters, env), true
	return s
}

// KeepWarm has the sandbox keep exec.warm_pool sandboxes booted ahead for
// the runs of run_script and run_command (their mounts and limits, any
// timeout), when the backend can (gVisor): a run then skips the boot. The
// pool is booted only once the tools are offered to a client (Offered) or
// called, and emptied after exec.warm_pool_idle without either; failed,
// if booting fails, is told why. It returns the pool's size, 0 when there
// is none. It is called once, after Bind.
func (s *Set) KeepWarm(failed func(error)) (int, error) {
	w, ok := sandbox.WarmerOf(s.runner)
	if !ok || s.cfg.WarmPool == 0 {
		return 0, nil
	}
	shapes, err := s.warmShapes()
	if err != nil {
		return 0, err
	}
	s.warm = &warmth{idle: s.cfg.WarmPoolIdle,
		start: func() {
			if err := w.Warm(s.cfg.WarmPool, shapes...); err != nil {
				failed(err)
			}
		},
		stop: func() { _ = w.Warm(0) },
	}
	return s.cfg.WarmPool, nil
}

// Offered says that a client was offered the exec tools: the pool boots,
// if it is kept (KeepWarm), and its idle clock restarts.
func (s *Set) Offered() {
	if s.warm != nil {
		s.warm.touch()
	}
}

// Close stops keeping the pool warm; the runner's Close removes it.
func (s *Set) Close() error {
	if s.warm != nil {
		s.warm.close()
	}
	return nil
}

// warmShapes are the runs' shapes the pool boots sandboxes for.
func (s *Set) warmShapes() ([]sandbox.Request, error) {
	limits, err := s.limits(0)
	if err != nil {
		return nil, err
	}
	// Booted for the longest run allowed: rootless, a shorter one lowers
	// its CPU time limit (RLIMIT_CPU) inside the sandbox.
	limits.Timeout = s.cfg.Limits.MaxTimeout
	var shapes []sandbox.Request
	if len(s.interpreters) > 0 {
		shape := sandbox.Request{Workspace: s.workspace, WorkspaceWritable: s.cfg.WorkspaceWritable, Limits: limits}
		if prefix, env, ok := s.pythonRuns(); ok {
			// Its sandboxes may start the interpreter ahead.
			shape.Argv, shape.Env = prefix, env
		}
		shapes = append(shapes, shape)
	}
	for _, c := range s.cfg.Commands {
		shapes = append(shapes, sandbox.Request{Workspace: s.workspace, WorkspaceWritable: s.cfg.WorkspaceWritable || c.WorkspaceWritable, Limits: limits})
	}
	return shapes, nil
}

// WarmsPython reports whether python scripts' sandboxes booted ahead start
// the interpreter ahead too (Warm; run_script offers python).
func (s *Set) WarmsPython() bool {
	prefix, env, ok := s.pythonRuns()
	return ok && s.cfg.WarmPool > 0 && sandbox.StartsAhead(prefix, env)
}

// pythonRuns is what every python run has: its argv up to the script, and
// its environment; false when run_script offers no python.
func (s *Set) pythonRuns() (prefix, env []string, ok bool) {
	py, ok := s.interpreters["python"]
	if !ok {
		return nil, nil, false
	}
	return py.argv[:len(py.argv)-1], scriptEnv(py), true
}

// Tools returns run_script when an interpreter is offered, and run_command
// when commands are configured.
func (s *Set) Tools() []tools.Tool {
	out := []tools.Tool{}
	if len(s.interpreterNames()) > 0 {
		out = append(out, s.runScript())
	}
	if len(s.cfg.Commands) > 0 {
		out = append(out, s.runCommand())
	}
	return out
}

// limits are the sandbox limits of a run that asks for timeoutSeconds.
func (s *Set) limits(timeoutSeconds int) (sandbox.Limits, error) {
	l := s.cfg.Limits
	timeout := l.Timeout
	if timeoutSeconds != 0 {
		timeout = time.Duration(timeoutSeconds) * time.Second
		if timeoutSeconds < 0 || timeout > l.MaxTimeout {
			return sandbox.Limits{}, toolerr.New(toolerr.InvalidArgument,
				"Ask for at most the maximum, or leave timeout_seconds out for the default.",
				"timeout_seconds %d is outside 1..%d", timeoutSeconds, int(l.MaxTimeout/time.Second)).WithRule("exec.limits.max_timeout")
		}
	}
	return sandbox.Limits{
		Timeout: timeout, MemoryBytes: l.MemoryBytes, CPUs: l.CPUs, Pids: l.Pids, NoFile: l.NoFile, NProc: l.NProc,
		FileSize: l.FileSizeBytes, AddressSpace: l.AddressSpaceBytes, ScratchBytes: l.ScratchBytes, OutputBytes: l.OutputBytes,
	}, nil
}

// runTimeout is how long a run with these arguments may take by its own
// timeout (timeout_seconds, or exec.limits.timeout), with the key that
// bounds it: the server's call deadline is never shorter (tools.Meta).
// A timeout_seconds the run would refuse counts as the default.
func (s *Set) runTimeout(args map[string]any) (time.Duration, string) {
	l := s.cfg.Limits
	var secs float64
	switch v := args["timeout_seconds"].(type) {
	case json.Number:
		secs, _ = v.Float64()
	case float64:
		secs = v
	}
	if d := time.Duration(secs) * time.Second; d > 0 && d <= l.MaxTimeout {
		return d, "exec.limits.max_timeout"
	}
	return l.Timeout, "exec.limits.timeout"
}

// RunOut is what a sandboxed run returns. A program that fails is a normal
// result with its exit code; only a sandbox failure is a tool error.
type RunOut struct {
	Stdout          string `json:"stdout"`
	Stderr          string `json:"stderr"`
	StdoutTruncated bool   `json:"stdout_truncated" jsonschema:"True when stdout was cut at exec.limits.output_bytes"`
	StderrTruncated bool   `json:"stderr_truncated" jsonschema:"True when stderr was cut at exec.limits.output_bytes"`
	ExitCode        int    `json:"exit_code" jsonschema:"The program's exit status; 128+N when killed by signal N; -1 when killed before exiting"`
	DurationMS      int64  `json:"duration_ms"`
	LimitHit        string `json:"limit_hit,omitempty" jsonschema:"Which limit stopped the run: timeout, memory, output, pids or canceled; empty when none. stdout and stderr hold what it printed until then"`
	Sandbox         string `json:"sandbox" jsonschema:"The sandbox backend that ran it, e.g. runsc/systrap or bwrap"`
}

// run runs req in the sandbox, reporting progress while it runs.
func (s *Set) run(ctx context.Context, req sandbox.Request) (RunOut, error) {
	s.Offered() // a client that listed its tools earlier calls without listing them
	stop := reportProgress(ctx, req.Limits.Timeout)
	res, err := RunWithNetwork(ctx, s.runner, s.network, req)
	stop()
	if err != nil {
		if ctx.Err() != nil {
			return RunOut{}, toolerr.Wrap(err, toolerr.Canceled, "", "the run was cancelled; the sandbox was killed and removed")
		}
		if te, ok := errors.AsType[*toolerr.Error](err); ok {
			return RunOut{}, te // the runner's own answer, such as backend.unavailable
		}
		return RunOut{}, toolerr.Wrap(err, toolerr.SandboxFailed, "This is a server-side problem; retrying may not help.",
			"the sandbox failed: %v", err)
	}
	return RunOut{
		Stdout: string(res.Stdout), Stderr: string(res.Stderr),
		StdoutTruncated: res.StdoutTruncated, StderrTruncated: res.StderrTruncated,
		ExitCode: res.ExitCode, DurationMS: res.Duration.Milliseconds(), LimitHit: res.Limit, Sandbox: s.runner.Name(),
	}, nil
}

// progressEvery is how often a long run reports its elapsed time.
const progressEvery = 2 * time.Second

// reportProgress sends the elapsed time every progressEvery until stopped.
func reportProgress(ctx context.Context, timeout time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		start := time.Now()
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				el := time.Since(start).Round(time.Second)
				tools.Progress(ctx, el.Seconds(), timeout.Seconds(), "running for "+el.String())
			}
		}
	}()
	return func() { close(done) }
}
