package exec

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/sandbox"
)

// The previews show the human who approves a run exactly what will run:
// the program and its argv, the whole script and stdin, and the limits.

func (s *Set) previewScript(_ context.Context, in RunScriptIn) (string, error) {
	req, err := s.scriptRequest(in)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Run this %s script in the sandbox: %s\n%s\n", in.Interpreter, quoteArgv(req.Argv), sandboxTerms(req))
	fmt.Fprintf(&b, "\nScript (%d bytes):\n%s\n", len(in.Script), in.Script)
	if in.Stdin != "" {
		fmt.Fprintf(&b, "\nStdin (%d bytes):\n%s\n", len(in.Stdin), in.Stdin)
	}
	return b.String(), nil
}

func (s *Set) previewCommand(_ context.Context, in RunCommandIn) (string, error) {
	for _, c := range s.cfg.Commands {
		if c.Name != in.Command {
			continue
		}
		req, err := s.commandRequest(c, in)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Run command %s in the sandbox: %s\n%s", c.Name, quoteArgv(req.Argv), sandboxTerms(req)), nil
	}
	return "", toolerr.New(toolerr.InvalidSchema, "Use one of the commands in the tool description.",
		"command %q is not allowlisted", in.Command).WithRule("exec.commands")
}

// sandboxTerms says what the run may touch and how long it may take.
func sandboxTerms(req sandbox.Request) string {
	ws := "read-only"
	if req.WorkspaceWritable {
		ws = "WRITABLE (the run can change workspace files)"
	}
	l := req.Limits
	return fmt.Sprintf("No network; workspace %s; timeout %s, memory %d MiB, %g CPU, %d processes, output %d KiB per stream.",
		ws, l.Timeout, l.MemoryBytes>>20, l.CPUs, l.Pids, l.OutputBytes>>10)
}

// quoteArgv renders argv so that each element is visibly one argument.
func quoteArgv(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = strconv.Quote(a)
	}
	return "[" + strings.Join(q, " ") + "]"
}
