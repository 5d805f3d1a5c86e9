package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// maxQuestionBytes bounds the action an approval question shows. A longer
// one is not asked at all: a human approving a cut action would approve
// what they could not see.
const maxQuestionBytes = 64 << 10

// question builds the form that asks the human: a plain-text message that
// starts with the exact action, and one optional box to approve identical
// calls for the session.
func (a *approver) question(ctx context.Context, tool, digest string, raw json.RawMessage) (mcp.ElicitationParams, error) {
	action, err := a.preview(ctx, tool, raw)
	if err != nil {
		return mcp.ElicitationParams{}, err
	}
	action = displaySafe(action)
	if len(action) > maxQuestionBytes {
		return mcp.ElicitationParams{}, tooLargeToAsk(tool, len(action), maxQuestionBytes, "approval.max_question_bytes")
	}
	msg := fmt.Sprintf("%s\n\n— toolwarden asks you to approve this call to %s (arguments sha256 %s…). "+
		"Accept to run it once, decline to refuse it. The approval covers exactly these arguments and expires in %s.",
		action, tool, digest[:min(16, len(digest))], a.timeout)
	return mcp.ElicitationParams{
		Mode:    mcp.ElicitationModeForm,
		Message: msg,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				approveIdentical: map[string]any{
					"type":        "boolean",
					"title":       "Approve identical calls for this session",
					"description": "Also run later calls to " + tool + " with exactly these arguments in this session without asking.",
					"default":     false,
				},
			},
		},
	}, nil
}

// preview is the tool's own description of the action, or its name and
// canonical JSON arguments.
func (a *approver) preview(ctx context.Context, tool string, raw json.RawMessage) (string, error) {
	if p := a.previews[tool]; p != nil {
		return p(ctx, raw)
	}
	return GenericPreview(tool, raw), nil
}

// GenericPreview shows a call as its tool name and indented JSON arguments.
func GenericPreview(tool string, raw json.RawMessage) string {
	var buf bytes.Buffer
	if len(raw) == 0 || json.Indent(&buf, raw, "", "  ") != nil {
		buf.Reset()
		buf.WriteString("{}")
	}
	return fmt.Sprintf("Call %s with arguments:\n%s", tool, buf.String())
}

// displaySafe escapes what could disguise the action on the human's
// screen: terminal control sequences, bidi overrides and other invisible
// format characters. Newlines and tabs stay.
func displaySafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r):
			fmt.Fprintf(&b, "\\u{%04X}", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// tooLargeToAsk refuses a call whose action is too long to show whole.
func tooLargeToAsk(tool string, n, limit int, rule string) *toolerr.Error {
	return toolerr.New(toolerr.LimitExceeded,
		"Make the change in smaller calls (a shorter script, fewer edits, a smaller file) so the human can read all of it; the operator can set approval.modes for this tool.",
		"the action of this %s call is %d bytes, more than an approval question shows whole (%d bytes), so the human is not asked", tool, n, limit).
		WithRule(rule)
}
