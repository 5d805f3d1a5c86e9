package socket

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/approvals"
)

// hostile are server fields as an attacker shapes them, each with a
// character a terminal acts on.
var hostile = map[string]string{
	"osc title":       "a\x1b]0;pwned\ab",
	"clear screen":    "a\x1b[2Jb",
	"8-bit csi":       "a\u009b31mb",
	"raw 0x9b byte":   "a\x9b31mb",
	"rlo":             "a\u202eb",
	"zero width":      "a\u200bb",
	"tag character":   "a\U000E0041b",
	"newline row":     "a\nfake  row",
	"carriage return": "a\rb",
	"tab":             "a\tb",
	"line separator":  "a\u2028b",
	"para separator":  "a\u2029b",
}

// terminalActs reports a character of s a terminal would act on.
func terminalActs(s string, keepBreaks bool) (rune, bool) {
	for _, r := range s {
		if keepBreaks && (r == '\n' || r == '\t') {
			continue
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u202e' || r == '\u200b' ||
			r == '\U000E0041' || r == '\u2028' || r == '\u2029' {
			return r, true
		}
	}
	return 0, strings.Contains(s, "\x9b")
}

func hostileRequest(field string) Pending {
	now := time.Now()
	return Pending{Server: field, Request: approvals.Request{ID: field, Tool: field, Identity: field,
		Session: field, Preview: field + "\nsecond line", Created: now, Expires: now.Add(time.Minute)}}
}

func TestListEscapesEveryField(t *testing.T) {
	for name, field := range hostile {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, PrintList(&out, []Pending{hostileRequest(field)}, false, time.Now()))
			r, acts := terminalActs(out.String(), true)
			require.False(t, acts, "%U printed raw: %q", r, out.String())
			require.Len(t, strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n"), 2, "header and one row: %q", out.String())
			require.NotContains(t, out.String(), "second line", "the table shows the action's first line")
		})
	}
}

func TestListJSONEscapesAndKeepsValues(t *testing.T) {
	for name, field := range hostile {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, PrintList(&out, []Pending{hostileRequest(field)}, true, time.Now()))
			r, acts := terminalActs(out.String(), true)
			require.False(t, acts, "%U printed raw: %q", r, out.String())
			var back []Pending
			require.NoError(t, json.Unmarshal(out.Bytes(), &back))
			want := strings.ToValidUTF8(field, "\uFFFD")
			require.Equal(t, want, back[0].Identity, "the JSON says the same, escaped")
		})
	}
}

func TestWatchEscapesEveryField(t *testing.T) {
	for name, field := range hostile {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			w := &watcher{out: &out, queue: []Pending{hostileRequest(field)}}
			w.askNext()
			r, acts := terminalActs(out.String(), true)
			require.False(t, acts, "%U printed raw: %q", r, out.String())
			require.Regexp(t, "\nidentity: [^\n]+\nsession:  [^\n]+\nexpires:  ", out.String(), "one line per field")
			require.Contains(t, out.String(), "\nsecond line\n", "the preview keeps its lines")
		})
	}
}

func TestEscapeForm(t *testing.T) {
	require.Equal(t, `a\u{001B}]0;x\u{0007}`, oneLine("a\x1b]0;x\a"))
	require.Equal(t, `a\u{2028}b\u{2029}c\u{000A}d\u{0009}e`, oneLine("a\u2028b\u2029c\nd\te"))
	require.Equal(t, `a\u{2028}b\u{2029}c`+"\nd\te", lines("a\u2028b\u2029c\nd\te"), "a block keeps newline and tab")
	require.Equal(t, "plain ü 名前", oneLine("plain ü 名前"), "printable text is left alone")
}
