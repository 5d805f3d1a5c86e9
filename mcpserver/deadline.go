package mcpserver

import (
	"time"

	"github.com/toolwarden/toolwarden/tools"
)

// runMargin is how much longer than a tool's own run timeout its call
// deadline is at least: time to start and remove a sandbox, so that the
// sandbox's timeout, not the call deadline, ends a long run.
const runMargin = 5 * time.Second

// runTimeouts maps each tool with its own run timeout (tools.Meta.RunTimeout)
// to it.
func runTimeouts(toolset []tools.Tool) map[string]func(map[string]any) (time.Duration, string) {
	out := map[string]func(map[string]any) (time.Duration, string){}
	for _, t := range toolset {
		if t.Meta.RunTimeout != nil {
			out[t.Tool.Name] = t.Meta.RunTimeout
		}
	}
	return out
}

// callDeadline is how long a call of tool with args may run, and the key
// that sets it. limits.call_timeout is a default for every tool and never
// cuts a tool's own advertised timeout: a tool whose run may take longer
// (run_script's 60 s against a 30 s call_timeout) gets that plus
// runMargin. A limits.tools timeout is the operator's choice for that
// tool and still applies; a run it cuts returns its output so far
// (limit_hit timeout).
func (s *Server) callDeadline(tool string, args any) (time.Duration, string) {
	var atLeast time.Duration
	var rule string
	if run, ok := s.runTimeouts[tool]; ok {
		m, _ := args.(map[string]any)
		atLeast, rule = run(m)
		atLeast += runMargin
	}
	return s.guard.CallTimeoutFor(tool, atLeast, rule)
}
