package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
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

// displaySafe makes visible what could disguise the action on the human's
// screen: terminal control sequences, bidi overrides, other invisible
// format characters and line or paragraph separators are escaped
// (\u{202E}); newlines and tabs stay. A run of more than maxBlankLines
// blank lines, which would push what follows below the preview box or
// the terminal's screen, is folded into one line that counts them.
// Every channel's question goes through it.
func displaySafe(s string) string {
	return foldBlankLines(escapeHidden(s))
}

// escapeHidden escapes the characters hidden reports. An action with
// none is returned as is, not copied: a waiting call keeps it once.
func escapeHidden(s string) string {
	i := strings.IndexFunc(s, hidden)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		if hidden(r) {
			fmt.Fprintf(&b, "\\u{%04X}", r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// hidden reports whether r shows as something else than itself, or as
// nothing: a control or format character, or a line or paragraph
// separator (which some screens break the line at and others hide).
func hidden(r rune) bool {
	if r == '\n' || r == '\t' {
		return false
	}
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// maxBlankLines is the most blank lines an action shows in a row; the
// output filter folds tool results the same way (outfilter.MaxBlankLines),
// but a human reading a preview box needs a tighter bound than a model.
const maxBlankLines = 2

// foldBlankLines replaces each run of more than maxBlankLines blank lines
// by one line saying how many were folded, in the output filter's words.
// A diff's added or removed blank lines ("+", "-") fold the same way and
// keep their sign. Text with no such run is returned as is.
func foldBlankLines(s string) string {
	var b strings.Builder
	pos, off := 0, 0 // s[:pos] is in b; off is where the line starts
	var run struct {
		start, lines int
		sign         string
	}
	flush := func() {
		if run.lines > maxBlankLines {
			b.WriteString(s[pos:run.start])
			// Not fmt: b would escape, and plain text cost an allocation.
			b.WriteString(run.sign + "[toolwarden: " + strconv.Itoa(run.lines) + " blank lines collapsed]")
			if strings.HasSuffix(s[:off], "\n") {
				b.WriteByte('\n')
			}
			pos = off
		}
		run.lines = 0
	}
	for line := range strings.Lines(s) {
		sign, blank := blankLine(line)
		if !blank || sign != run.sign {
			flush()
		}
		if blank {
			if run.lines == 0 {
				run.start, run.sign = off, sign
			}
			run.lines++
		}
		off += len(line)
	}
	flush()
	if pos == 0 {
		return s
	}
	b.WriteString(s[pos:])
	return b.String()
}

// blankLine reports whether line shows as nothing, after a diff's sign.
func blankLine(line string) (sign string, blank bool) {
	body := strings.TrimSuffix(line, "\n")
	if body != "" && (body[0] == '+' || body[0] == '-') {
		sign, body = body[:1], body[1:]
	}
	return sign, strings.TrimFunc(body, blankRune) == ""
}

// blankRune reports whether r renders as empty space: white space and the
// fillers fonts draw as nothing (Braille blank, Hangul fillers).
func blankRune(r rune) bool {
	switch r {
	case '\u2800', '\u115F', '\u1160', '\u3164', '\uFFA0':
		return true
	}
	return unicode.IsSpace(r)
}

// tooLargeToAsk refuses a call whose action is too long to show whole.
func tooLargeToAsk(tool string, n, limit int, rule string) *toolerr.Error {
	return toolerr.New(toolerr.LimitExceeded,
		"Make the change in smaller calls (a shorter script, fewer edits, a smaller file) so the human can read all of it; the operator can set approval.modes for this tool.",
		"the action of this %s call is %d bytes, more than an approval question shows whole (%d bytes), so the human is not asked", tool, n, limit).
		WithRule(rule)
}
