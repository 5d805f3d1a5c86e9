package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"unicode"

	"github.com/mark3labs/mcp-go/mcp"
)

// Approver answers the server's elicitation requests (approval prompts)
// on the terminal. With no terminal it declines, unless Yes is set; Yes
// answers approval prompts only, it never overrides a guard denial, which
// is a tool result and never reaches the approver.
type Approver struct {
	In          *Input    // the terminal; shared with the REPL
	Out         io.Writer // where the prompt is shown (stderr)
	Interactive bool      // In is a terminal
	Yes         bool      // --yes: accept every approval prompt, logged
	Log         *slog.Logger
	mu          sync.Mutex // one prompt at a time, even with --parallel
}

// Elicit implements client.ElicitationHandler.
func (a *Approver) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	action := describe(req.Params)
	switch {
	case req.Params.Mode == mcp.ElicitationModeURL:
		fmt.Fprintf(a.Out, "\n[approval] %s\n[approval] declined: the bridge does not open URLs\n", action)
		return decline(), nil
	case a.Yes:
		fmt.Fprintf(a.Out, "\n[approval] %s\n[approval] accepted by --yes\n", action)
		a.Log.Warn("approval accepted by --yes", "action", action)
		return accept(req.Params), nil
	case !a.Interactive:
		fmt.Fprintf(a.Out, "\n[approval] %s\n[approval] declined: no terminal to ask on (run interactively, or pass --yes)\n", action)
		a.Log.Info("approval declined: not interactive", "action", action)
		return decline(), nil
	}
	fmt.Fprintf(a.Out, "\n[approval] %s\nApprove? [y/N] ", action)
	answer, err := a.In.ReadLine(ctx)
	if err != nil || !isYes(answer) {
		fmt.Fprintln(a.Out, "[approval] declined")
		return decline(), nil
	}
	fmt.Fprintln(a.Out, "[approval] accepted")
	return accept(req.Params), nil
}

func isYes(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	return s == "y" || s == "yes"
}

// describe renders the exact action the server asks about: its message and
// the fields it asks for, with terminal control characters made visible so
// that text from a model or a file cannot rewrite what the user sees.
func describe(p mcp.ElicitationParams) string {
	var b strings.Builder
	b.WriteString(visible(p.Message))
	if p.RequestedSchema != nil {
		if s, err := json.Marshal(p.RequestedSchema); err == nil {
			b.WriteString("\n[approval] asks for: ")
			b.WriteString(visible(string(s)))
		}
	}
	return b.String()
}

// Printable is s made safe for a terminal: what the model or a server
// wrote (answers, tool names and descriptions) goes through it before it
// is shown.
func Printable(s string) string { return visible(s) }

// visible replaces control and invisible format characters (ANSI escapes,
// carriage returns, bidi overrides) with their escaped form; newlines and
// tabs stay.
func visible(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '\n' || r == '\t' || (!unicode.IsControl(r) && !unicode.Is(unicode.Cf, r)) {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, "\\u%04x", r)
	}
	return b.String()
}

func decline() *mcp.ElicitationResult {
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}
}

// accept answers the form minimally: required fields only, each with the
// answer that approves this one call. Optional fields (such as "approve for
// the rest of the session") are left out, and a required choice that
// would widen beyond this call is answered no, so accepting never grants
// more than the action shown.
func accept(p mcp.ElicitationParams) *mcp.ElicitationResult {
	content := map[string]any{}
	schema, _ := p.RequestedSchema.(map[string]any)
	if schema == nil {
		if b, err := json.Marshal(p.RequestedSchema); err == nil {
			_ = json.Unmarshal(b, &schema)
		}
	}
	props, _ := schema["properties"].(map[string]any)
	required, _ := schema["required"].([]any)
	for _, r := range required {
		name, _ := r.(string)
		prop, _ := props[name].(map[string]any)
		if enum, ok := prop["enum"].([]any); ok && len(enum) > 0 {
			content[name] = approvingChoice(enum)
		} else if prop["type"] == "boolean" {
			content[name] = !widens(name)
		}
	}
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: content}}
}

// widens reports whether a field or choice name reads as a standing grant
// or a refusal rather than a yes to this one call.
func widens(name string) bool {
	n := strings.ToLower(name)
	if n == "no" || n == "all" {
		return true
	}
	for _, w := range []string{"session", "always", "remember", "deny", "reject", "decline"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// approvingChoice picks the enum value that approves exactly this call:
// the first that does not widen, else the first.
func approvingChoice(enum []any) any {
	for _, v := range enum {
		if s, ok := v.(string); ok && !widens(s) {
			return v
		}
	}
	return enum[0]
}
