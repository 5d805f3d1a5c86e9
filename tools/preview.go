package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// Preview renders the action of a call read-only, for human approval. An
// error that is a *toolerr.Error means the call would fail: it is refused
// without asking.
type Preview func(ctx context.Context, raw json.RawMessage) (string, error)

// PreviewOf builds a Preview from a typed function: the raw arguments are
// decoded strictly into In, as the handler will decode them.
func PreviewOf[In any](f func(ctx context.Context, in In) (string, error)) Preview {
	return func(ctx context.Context, raw json.RawMessage) (string, error) {
		var in In
		req := mcp.CallToolRequest{}
		req.Params.RawArguments = raw
		if len(raw) == 0 {
			req.Params.RawArguments = json.RawMessage("{}")
		}
		if err := decodeArgs(req, &in); err != nil {
			return "", toolerr.New(toolerr.InvalidSchema, "Call the tool with exactly the parameters in its inputSchema.",
				"arguments do not decode: %v", err)
		}
		return f(ctx, in)
	}
}

// WithPreview returns t with its approval preview set.
func WithPreview(t Tool, p Preview) Tool {
	t.Meta.Preview = p
	return t
}

// ShellQuote renders argv as a POSIX shell command line for a human to
// approve: each element is visibly one argument and nothing in it can pass
// for shell syntax or disturb the display. Plain words stay bare, others
// are single-quoted, and an element holding a control, invisible or
// direction-changing character, or bytes that are not UTF-8, is written in
// bash's $'...' form with escapes, so a newline cannot fake a second line
// of the prompt.
func ShellQuote(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

func shellQuote(s string) string {
	switch {
	case s == "":
		return "''"
	case !strings.ContainsFunc(s, func(r rune) bool { return !plainShellRune(r) }):
		return s
	case utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }):
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80 && !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case !unicode.IsPrint(r) && r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		case !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	b.WriteString("'")
	return b.String()
}

// plainShellRune is a character that needs no quoting in any position.
func plainShellRune(r rune) bool {
	return r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r))
}
