package toolerr

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// MetaKey is the result `_meta` key under which an error result carries
// its Error as a JSON object {code, message, hint, rule}, for programs.
const MetaKey = "io.toolwarden/error"

// Result turns e into the tool result the model receives: isError set, one
// text content saying code, message, hint and rule in plain words (see
// Text), and the same fields as an object under _meta[MetaKey].
//
// The text is deliberately not a JSON object: Gemini CLI (and any client
// built the same way on the TypeScript SDK) parses a JSON object found in
// the first text of a result without structuredContent into
// structuredContent, and the SDK then validates it against the tool's
// outputSchema, which an error never matches: the call fails with -32602
// and the model never sees the code or the hint. No structuredContent is
// sent either, for the same reason.
func Result(e *Error) *mcp.CallToolResult {
	fields := *e
	fields.err = nil // the cause is never shown
	return &mcp.CallToolResult{
		Result:  mcp.Result{Meta: &mcp.Meta{AdditionalFields: map[string]any{MetaKey: fields}}},
		Content: []mcp.Content{mcp.NewTextContent(e.Text())},
		IsError: true,
	}
}

// Text renders e as the model reads it, one field a line:
//
//	denied.approval_unavailable: write_file needs a human's approval ...
//	Hint: Ask the user to ...
//	Rule: approval.elicit
//	Retry after: 40 s
//
// The Hint, Rule and Retry after lines are left out when empty.
func (e *Error) Text() string {
	var b strings.Builder
	b.WriteString(string(e.Code) + ": " + e.Message)
	if e.Hint != "" {
		b.WriteString("\nHint: " + e.Hint)
	}
	if e.Rule != "" {
		b.WriteString("\nRule: " + e.Rule)
	}
	if e.RetryAfter > 0 {
		b.WriteString("\nRetry after: " + strconv.Itoa(e.RetryAfter) + " s")
	}
	return b.String()
}

// FromResult reads back the Error of an error result built by Result: from
// _meta[MetaKey] (an Error in process, a decoded map or raw JSON after a
// transport or the output filter), else from the code that starts its
// first text, for a client that dropped _meta. ok is false for a success
// and for an error result of another shape.
func FromResult(res *mcp.CallToolResult) (e Error, ok bool) {
	if res == nil || !res.IsError {
		return Error{}, false
	}
	if res.Meta != nil {
		if v, found := res.Meta.AdditionalFields[MetaKey]; found {
			if raw, err := json.Marshal(v); err == nil && json.Unmarshal(raw, &e) == nil && e.Code != "" {
				return e, true
			}
		}
	}
	for _, c := range res.Content {
		if tc, isText := c.(mcp.TextContent); isText {
			return parseText(tc.Text)
		}
	}
	return Error{}, false
}

// textLine matches the first line Text writes: a code, ": ", the message.
var textLine = regexp.MustCompile(`^([a-z_]+(?:\.[a-z_]+)*): (.*)$`)

// parseText is the inverse of Text, for results whose _meta was dropped.
func parseText(text string) (Error, bool) {
	lines := strings.Split(text, "\n")
	m := textLine.FindStringSubmatch(lines[0])
	if m == nil {
		return Error{}, false
	}
	e := Error{Code: Code(m[1]), Message: m[2]}
	for _, l := range lines[1:] {
		if h, found := strings.CutPrefix(l, "Hint: "); found {
			e.Hint = h
		} else if r, found := strings.CutPrefix(l, "Rule: "); found {
			e.Rule = r
		} else if r, found := strings.CutPrefix(l, "Retry after: "); found {
			e.RetryAfter, _ = strconv.Atoi(strings.TrimSuffix(r, " s"))
		}
	}
	return e, true
}

// ErrorCode reads the code back from a result built by Result; it returns
// Internal for an error result of another shape and "" for a success.
func ErrorCode(res *mcp.CallToolResult) Code {
	if res == nil || !res.IsError {
		return ""
	}
	if e, ok := FromResult(res); ok {
		return e.Code
	}
	return Internal
}
