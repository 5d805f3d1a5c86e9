package mcpserver

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDisplaySafeShowsHiddenText: what would push part of an action out
// of the human's sight on any channel is made visible: line and
// paragraph separators are escaped like the other invisible characters,
// and a run of blank lines is folded into one line that counts them.
func TestDisplaySafeShowsHiddenText(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"line separator", "ok\u2028rm -rf ~", `ok\u{2028}rm -rf ~`},
		{"paragraph separator", "ok\u2029rm -rf ~", `ok\u{2029}rm -rf ~`},
		{"two blank lines stay", "a\n\n\nb", "a\n\n\nb"},
		{"blank lines folded", "a\n" + strings.Repeat("\n", 150) + "payload\n",
			"a\n[toolwarden: 150 blank lines collapsed]\npayload\n"},
		{"whitespace-only lines folded", "a\n \t\n\u3000\n\u2800  \n\u00a0\nb", "a\n[toolwarden: 4 blank lines collapsed]\nb"},
		{"added blank lines of a diff", "+a\n" + strings.Repeat("+\n", 150) + "+payload\n",
			"+a\n+[toolwarden: 150 blank lines collapsed]\n+payload\n"},
		{"a trailing run keeps no newline it did not have", "a\n\n\n\n ", "a\n[toolwarden: 4 blank lines collapsed]"},
		{"separators do not count as blank", "a\n\u2028\n\u2028\n\u2028\nb", "a\n\\u{2028}\n\\u{2028}\n\\u{2028}\nb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, displaySafe(tc.in))
		})
	}
}

// TestDisplaySafeKeepsPlainText: an action with nothing to escape or
// fold is the very string given, not a copy: a waiting call keeps its
// preview once.
func TestDisplaySafeKeepsPlainText(t *testing.T) {
	s := strings.Repeat("plain line\n", 1000)
	require.Equal(t, 0.0, testing.AllocsPerRun(10, func() { _ = displaySafe(s) }))
}
