package exec

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools"
)

// RunScriptIn is run_script's input.
type RunScriptIn struct {
	Interpreter    string   `json:"interpreter" jsonschema:"One of the enabled interpreters: python, bash or go"`
	Script         string   `json:"script" jsonschema:"The whole program text"`
	Args           []string `json:"args,omitempty" jsonschema:"Command-line arguments for the script, one element each"`
	Stdin          string   `json:"stdin,omitempty" jsonschema:"Text fed to the script's standard input"`
	TimeoutSeconds int      `json:"timeout_seconds,omitempty" jsonschema:"Wall-clock limit in seconds (default exec.limits.timeout, at most exec.limits.max_timeout)"`
}

// Bounds on the arguments, whatever the config says.
const (
	maxArgs   = 64
	maxArgLen = 4096
)

const runScriptDesc = `Run a short python, bash or go program in an isolated sandbox and get its output.

When to use: to compute, transform or check something with code you write: parse a file of the workspace, test a snippet, do arithmetic. Not for long-running services: runs are killed at the timeout.

Parameters:
- interpreter (required): python (Python 3), bash, or go (a complete main package; it is built, then run).
- script (required): the whole program text. It is stored as a read-only file, never put on a command line.
- args: command-line arguments for the script, each element one argument (sys.argv[1:], "$@", os.Args[1:]).
- stdin: text fed to standard input (default empty).
- timeout_seconds: wall-clock limit (default and maximum set by the operator).

The sandbox: no network at all; the workspace is mounted read-only at /workspace, which is also the working directory; /tmp is a small writable scratch space that disappears after the run; the program runs as an unprivileged user with memory, CPU, process and file-size limits; the server's environment variables are not visible.

Returns: stdout, stderr (each capped; stdout_truncated / stderr_truncated say when cut), exit_code, duration_ms, limit_hit (timeout, memory, output, pids or canceled when a limit or a cancellation stopped the run; stdout and stderr then hold what it printed until then) and sandbox (the backend). A script that fails is a normal result with a non-zero exit_code: read stderr.

Errors: invalid_argument.interpreter for anything but the enabled interpreters; limit.too_large when script plus stdin exceed the input cap; invalid_argument for a bad timeout_seconds or args; sandbox.failed when the sandbox itself could not run; canceled when the call is cancelled before the run starts (a run already going is killed and returns its output with limit_hit canceled).

Side effects: none outside the sandbox unless the operator made the workspace writable. Each run starts from a clean sandbox.

Example: {"interpreter": "python", "script": "import sys\nprint(sum(map(int, sys.argv[1:])))", "args": ["2", "3"]}`

func (s *Set) runScript() tools.Tool {
	t := tools.New("run_script", s.withNetworkNote(runScriptDesc),
		tools.Annotations{Title: "Run script in sandbox", Destructive: s.cfg.WorkspaceWritable},
		tools.Meta{Toolset: "exec", Capabilities: []string{"proc:exec:{interpreter}"}, RequiresApproval: true, HighRisk: true, RunTimeout: s.runTimeout},
		func(ctx context.Context, in RunScriptIn) (RunOut, error) {
			req, err := s.scriptRequest(in)
			if err != nil {
				return RunOut{}, err
			}
			if cache := s.interpreters[in.Interpreter].cache; cache != nil {
				if req.Cache, err = waitGoCache(ctx, cache, req.Limits.Timeout); err != nil {
					return RunOut{}, err
				}
			}
			return s.run(ctx, req)
		})
	return tools.WithPreview(tools.WithEnum(t, "interpreter", s.interpreterNames()), tools.PreviewOf(s.previewScript))
}

// interpreterNames are the interpreters run_script offers: the enabled
// ones until Bind, then those of them this machine can run.
func (s *Set) interpreterNames() []string {
	var names []string
	if s.bound {
		for n := range s.interpreters {
			names = append(names, n)
		}
	} else {
		for _, n := range s.cfg.Interpreters {
			if slices.Contains(configs.Interpreters, n) && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	return names
}

// scriptRequest checks in and turns it into a sandbox request. Nothing
// runs when it fails.
func (s *Set) scriptRequest(in RunScriptIn) (sandbox.Request, error) {
	interp, ok := s.interpreters[in.Interpreter]
	if !ok {
		return sandbox.Request{}, toolerr.New(toolerr.InvalidInterpreter,
			"Use exactly one of: "+strings.Join(s.interpreterNames(), ", ")+".",
			"interpreter %q is not allowed", in.Interpreter).WithRule("exec.interpreters")
	}
	if strings.TrimSpace(in.Script) == "" || strings.ContainsRune(in.Script, 0) {
		return sandbox.Request{}, toolerr.New(toolerr.InvalidArgument, "Send the program text.", "script is empty or contains a NUL byte")
	}
	if n := len(in.Script) + len(in.Stdin); n > s.cfg.Limits.MaxInputBytes {
		return sandbox.Request{}, toolerr.New(toolerr.TooLarge, "Send a shorter script or less stdin.",
			"script plus stdin is %d bytes; the cap is %d", n, s.cfg.Limits.MaxInputBytes).WithRule("exec.limits.max_input_bytes")
	}
	if err := checkArgs(in.Args); err != nil {
		return sandbox.Request{}, err
	}
	limits, err := s.limits(in.TimeoutSeconds)
	if err != nil {
		return sandbox.Request{}, err
	}
	return sandbox.Request{
		Argv:              append(slices.Clone(interp.argv), in.Args...),
		Env:               scriptEnv(interp),
		Stdin:             []byte(in.Stdin),
		Files:             map[string][]byte{interp.file: []byte(in.Script)},
		Workspace:         s.workspace,
		WorkspaceWritable: s.cfg.WorkspaceWritable,
		Limits:            limits,
	}, nil
}

// scriptEnv is the environment of a run of interp.
func scriptEnv(interp interpreter) []string {
	env := append(slices.Clone(baseEnv), interp.env...)
	if interp.cache != nil {
		// The prepared cache is mounted at sandbox.CacheDir once ready
		// (see waitGoCache); a go run never compiles without it.
		env = append(env, goEnv(interp.goRoot, sandbox.CacheDir)...)
	}
	return env
}

// checkArgs bounds argv elements; NUL cannot be passed in argv at all.
func checkArgs(args []string) error {
	if len(args) > maxArgs {
		return toolerr.New(toolerr.InvalidArgument, "Pass fewer arguments, or send data on stdin.", "%d args; at most %d", len(args), maxArgs)
	}
	for i, a := range args {
		if len(a) > maxArgLen || strings.ContainsRune(a, 0) {
			return toolerr.New(toolerr.InvalidArgument, "Send long or binary data on stdin instead.",
				"args[%d] is longer than %d bytes or contains a NUL byte", i, maxArgLen)
		}
	}
	return nil
}
