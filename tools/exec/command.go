package exec

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools"
)

// RunCommandIn is run_command's input.
type RunCommandIn struct {
	Command        string   `json:"command" jsonschema:"The name of one allowlisted command"`
	Args           []string `json:"args,omitempty" jsonschema:"Arguments appended after the command's fixed ones, one element each"`
	TimeoutSeconds int      `json:"timeout_seconds,omitempty" jsonschema:"Wall-clock limit in seconds (default exec.limits.timeout, at most exec.limits.max_timeout)"`
}

const runCommandDesc = `Run one program from the operator's allowlist, in the sandbox, with arguments you choose.

When to use: to run a project tool the operator allowed (for example tests or version-control status) instead of re-implementing it in a script.

Parameters:
- command (required): one of the allowlisted names below.
- args: arguments appended after the command's fixed arguments, each element one argument. They are never interpreted by a shell. Arguments starting with "-" are refused unless the operator allowed flags for that command; some commands accept no arguments at all.
- timeout_seconds: wall-clock limit (default and maximum set by the operator).

Commands:
%s
Returns: stdout, stderr (each capped, with truncated flags), exit_code, duration_ms, limit_hit, sandbox. A failing program is a normal result with its exit_code.

Errors: invalid_argument.schema for an unknown command; invalid_argument.flag_not_allowed for a flag where flags are not allowed; invalid_argument for too many or malformed args; sandbox.failed; canceled.

Side effects: the program runs in the same sandbox as run_script (no network, unprivileged, limited); the workspace is read-only unless the operator made it writable for that command.

Example: {"command": "%s", "args": []}`

func (s *Set) runCommand() tools.Tool {
	cmds := map[string]configs.Command{}
	var names []string
	var list strings.Builder
	for _, c := range s.cfg.Commands {
		cmds[c.Name] = c
		names = append(names, c.Name)
	}
	sort.Strings(names)
	for _, n := range names {
		c := cmds[n]
		fmt.Fprintf(&list, "- %s: %s (runs %s; up to %d extra args)\n", n, c.Description, strings.Join(c.Argv, " "), c.MaxArgs)
	}
	t := tools.New("run_command", s.withNetworkNote(fmt.Sprintf(runCommandDesc, list.String(), names[0])),
		tools.Annotations{Title: "Run allowlisted command in sandbox", Destructive: s.anyWritable()},
		tools.Meta{Toolset: "exec", Capabilities: []string{"proc:exec:{command}"}, RequiresApproval: true, HighRisk: true, RunTimeout: s.runTimeout},
		func(ctx context.Context, in RunCommandIn) (RunOut, error) {
			c, ok := cmds[in.Command]
			if !ok {
				return RunOut{}, toolerr.New(toolerr.InvalidSchema, "Use one of: "+strings.Join(names, ", ")+".",
					"command %q is not allowlisted", in.Command).WithRule("exec.commands")
			}
			req, err := s.commandRequest(c, in)
			if err != nil {
				return RunOut{}, err
			}
			return s.run(ctx, req)
		})
	return tools.WithPreview(tools.WithEnum(t, "command", names), tools.PreviewOf(s.previewCommand))
}

func (s *Set) anyWritable() bool {
	return s.cfg.WorkspaceWritable || slices.ContainsFunc(s.cfg.Commands, func(c configs.Command) bool { return c.WorkspaceWritable })
}

// commandRequest checks the model's args against c's rules; nothing runs
// when it fails.
func (s *Set) commandRequest(c configs.Command, in RunCommandIn) (sandbox.Request, error) {
	if len(in.Args) > c.MaxArgs {
		return sandbox.Request{}, toolerr.New(toolerr.InvalidArgument, fmt.Sprintf("Pass at most %d args.", c.MaxArgs),
			"%s accepts %d extra args; got %d", c.Name, c.MaxArgs, len(in.Args)).WithRule("exec.commands." + c.Name + ".max_args")
	}
	if err := checkArgs(in.Args); err != nil {
		return sandbox.Request{}, err
	}
	var pattern *regexp.Regexp
	if c.ArgPattern != "" {
		pattern = regexp.MustCompile(`\A(?:` + c.ArgPattern + `)\z`)
	}
	for i, a := range in.Args {
		if strings.HasPrefix(a, "-") && !c.AllowFlags {
			return sandbox.Request{}, toolerr.New(toolerr.FlagNotAllowed, "Pass plain operands only; this command takes no flags from you.",
				"args[%d] %q looks like a flag", i, a).WithRule("exec.commands." + c.Name + ".allow_flags")
		}
		if pattern != nil && !pattern.MatchString(a) {
			return sandbox.Request{}, toolerr.New(toolerr.InvalidArgument, "Each arg must match "+c.ArgPattern+".",
				"args[%d] %q does not match the command's pattern", i, a).WithRule("exec.commands." + c.Name + ".arg_pattern")
		}
	}
	limits, err := s.limits(in.TimeoutSeconds)
	if err != nil {
		return sandbox.Request{}, err
	}
	env := slices.Clone(baseEnv)
	for k, v := range c.Env {
		env = append(env, k+"="+v)
	}
	return sandbox.Request{
		Argv:              append(slices.Clone(c.Argv), in.Args...),
		Env:               env,
		Workspace:         s.workspace,
		WorkspaceWritable: s.cfg.WorkspaceWritable || c.WorkspaceWritable,
		Limits:            limits,
	}, nil
}
