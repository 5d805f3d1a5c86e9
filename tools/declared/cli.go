package declared

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/exec"
)

// sandboxEnv is the environment of every cli tool's program, before the
// tool's own env; nothing of the server's environment is inherited.
var sandboxEnv = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8"}

// CLI runs declared cli tools in a sandbox over a workspace.
type CLI struct {
	Runner    sandbox.Runner
	Workspace *sandbox.Workspace
	// Limits are exec.limits; a tool's timeout and max_output_bytes
	// replace their timeout and output cap.
	Limits configs.ExecLimits
	// Go is the toolchain of tools that set go_cache.
	Go exec.Toolchain
	// Network gives the runs of a tool with a network block their way
	// out (nil for a tool without one: no network). Declared tools never
	// inherit exec.network.
	Network func(t configs.DeclaredTool) exec.NetworkFunc
}

// Tool builds the cli tool t.
func (c CLI) Tool(t configs.DeclaredTool) tools.Tool {
	chk := newChecker(t, c.Workspace)
	side := fmt.Sprintf("runs %s in the sandbox (%s, unprivileged, limited, workspace read-only at /workspace); each parameter is exactly one argument, never interpreted by a shell.",
		strings.Join(t.Command, " "), netTerms(t))
	argv := func(args map[string]any) ([]string, error) {
		vals, err := chk.values(args)
		if err != nil {
			return nil, err
		}
		return Argv(t, vals)
	}
	tool := build(t, "stdout, stderr (each capped, with truncated flags), exit_code, duration_ms, limit_hit, sandbox. A failing program is a normal result with its exit_code.", side,
		func(ctx context.Context, args map[string]any) (exec.RunOut, error) {
			argv, err := argv(args)
			if err != nil {
				return exec.RunOut{}, err
			}
			return c.run(ctx, t, argv)
		})
	return tools.WithPreview(tool, tools.PreviewOf(func(_ context.Context, args map[string]any) (string, error) {
		argv, err := argv(args)
		if err != nil {
			return "", err
		}
		return c.preview(t, argv), nil
	}))
}

// preview is what the human approves for a cli tool: the exact argv the
// sandbox will run, shell-quoted for display only (no shell runs it), and
// the sandbox's terms.
func (c CLI) preview(t configs.DeclaredTool, argv []string) string {
	l := c.limits(t)
	return fmt.Sprintf("Run declared tool %s in the sandbox (no shell; one argument per quoted word):\n%s\n%s; workspace read-only at /workspace; timeout %s, output %d KiB per stream.",
		t.Name, tools.ShellQuote(argv), upper(netTerms(t)), l.Timeout, l.OutputBytes>>10)
}

// Argv substitutes checked values into t's template: each placeholder's
// value becomes part of exactly one argument. An element whose optional
// param is absent is dropped. A value that starts with "-" where the
// program could read it as a flag (a whole element before "--") is refused
// unless the param allows it.
func Argv(t configs.DeclaredTool, vals map[string]value) ([]string, error) {
	argv := make([]string, 0, len(t.Command))
	afterDashes := false
	for _, elem := range t.Command {
		a, err := ParseArg(elem)
		if err != nil {
			return nil, toolerr.Wrap(err, toolerr.Internal, "", "tool %s has an invalid template", t.Name)
		}
		if a.Literal() {
			argv = append(argv, elem)
			afterDashes = afterDashes || elem == "--"
			continue
		}
		v, ok := vals[a.Param]
		if !ok {
			continue
		}
		p := param(t, a.Param)
		if a.Prefix == "" && !afterDashes && strings.HasPrefix(v.Text, "-") && !p.AllowFlagLike {
			return nil, toolerr.New(toolerr.FlagNotAllowed, "Pass a value that does not start with \"-\"; this parameter is never a flag.",
				"parameter %q value %q starts with \"-\" and would be read as a flag", a.Param, v.Text).
				WithRule("tools." + t.Name + ".params." + a.Param + ".allow_flag_like")
		}
		argv = append(argv, a.Prefix+v.Text+a.Suffix)
	}
	return argv, nil
}

func param(t configs.DeclaredTool, name string) configs.ToolParam {
	i := slices.IndexFunc(t.Params, func(p configs.ToolParam) bool { return p.Name == name })
	return t.Params[i]
}

// limits are exec.limits with t's own timeout and output cap.
func (c CLI) limits(t configs.DeclaredTool) sandbox.Limits {
	l := c.Limits
	limits := sandbox.Limits{
		Timeout: l.Timeout, MemoryBytes: l.MemoryBytes, CPUs: l.CPUs, Pids: l.Pids, NoFile: l.NoFile, NProc: l.NProc,
		FileSize: l.FileSizeBytes, AddressSpace: l.AddressSpaceBytes, ScratchBytes: l.ScratchBytes, OutputBytes: l.OutputBytes,
	}
	if t.Timeout > 0 {
		limits.Timeout = t.Timeout
	}
	if t.MaxOutputBytes > 0 {
		limits.OutputBytes = t.MaxOutputBytes
	}
	return limits
}

func (c CLI) run(ctx context.Context, t configs.DeclaredTool, argv []string) (exec.RunOut, error) {
	req := sandbox.Request{Argv: argv, Env: environ(t.Env), Workspace: c.Workspace.Dir(), Limits: c.limits(t)}
	if t.GoCache {
		if err := c.withGo(ctx, &req, t); err != nil {
			return exec.RunOut{}, err
		}
	}
	var network exec.NetworkFunc
	if c.Network != nil && t.Network.Enabled() {
		network = c.Network(t)
	}
	res, err := exec.RunWithNetwork(ctx, c.Runner, network, req)
	if err != nil {
		if ctx.Err() != nil {
			return exec.RunOut{}, toolerr.Wrap(err, toolerr.Canceled, "", "the run was cancelled; the sandbox was killed and removed")
		}
		return exec.RunOut{}, toolerr.Wrap(err, toolerr.SandboxFailed, "This is a server-side problem; retrying may not help.", "the sandbox failed: %v", err)
	}
	return exec.RunOut{
		Stdout: string(res.Stdout), Stderr: string(res.Stderr),
		StdoutTruncated: res.StdoutTruncated, StderrTruncated: res.StderrTruncated,
		ExitCode: res.ExitCode, DurationMS: res.Duration.Milliseconds(), LimitHit: res.Limit, Sandbox: c.Runner.Name(),
	}, nil
}

// environ is sandboxEnv followed by extra; of entries with the same key
// the last one wins, so a tool's env replaces a default.
func environ(extra []string) []string {
	all := append(slices.Clone(sandboxEnv), extra...)
	var out []string
	for i, kv := range all {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(all[i+1:], func(e string) bool { return strings.HasPrefix(e, k+"=") }) {
			out = append(out, kv)
		}
	}
	return out
}

// withGo gives req Go's environment and mounts the prepared GOCACHE,
// waiting for it within the run's timeout: a run never compiles the
// standard library into its small scratch space. The tool's env still
// wins.
func (c CLI) withGo(ctx context.Context, req *sandbox.Request, t configs.DeclaredTool) error {
	dir, err := exec.WaitGoCache(ctx, c.Go.Cache, req.Limits.Timeout)
	if err != nil {
		return err
	}
	req.Cache = dir
	env := exec.GoEnv(c.Go.GoRoot, sandbox.CacheDir)
	if t.GoModules {
		if req.ModCache, err = c.modCache(ctx, req.Limits.Timeout); err != nil {
			return err
		}
		env = append(env, exec.ModEnv(sandbox.ModCacheDir)...)
	}
	req.Env = environ(append(env, t.Env...))
	return nil
}

// modCache prepares (or finds) the verified module cache of the
// workspace's go.mod and go.sum, within the run's timeout.
func (c CLI) modCache(ctx context.Context, timeout time.Duration) (string, error) {
	read := func(name string) ([]byte, error) {
		b, truncated, err := c.Workspace.ReadFileLimited(name, 1<<20)
		if err == nil && truncated {
			err = toolerr.New(toolerr.TooLarge, "", "%s is over 1 MiB", name).WithRule("exec.go_modules.go_mod")
		}
		return b, err
	}
	goMod, err := read("go.mod")
	if err != nil {
		return "", toolerr.New(toolerr.NotFound, "go_modules needs a go.mod at the workspace root.",
			"the workspace has no readable go.mod").WithRule("exec.go_modules.go_mod")
	}
	goSum, err := read("go.sum")
	if err != nil && toolerr.CodeOf(err) != toolerr.NotFound {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return c.Go.Mods.Prepare(ctx, goMod, goSum)
}

// netTerms is what the tool's sandbox reaches: nothing, or the hosts of
// its network block through the egress proxy.
func netTerms(t configs.DeclaredTool) string {
	if !t.Network.Enabled() {
		return "no network"
	}
	return "network only through the egress proxy, to " + strings.Join(t.Network.Allow, ", ")
}

func upper(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
