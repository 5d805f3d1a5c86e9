package outfilter

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Terminal control sequences go whole, other control characters one by
// one; tab, line feed and carriage return stay; so does every printable
// character.
func TestControlSequencesAreStripped(t *testing.T) {
	f := newFilter(t)
	cases := []struct {
		name, in, want string
		controls       int
	}{
		{"CSI colour", "\x1b[1;31mred\x1b[0m text", "red text", 2},
		{"CSI erase display and cursor home", "shown\x1b[2J\x1b[Hhidden before", "shownhidden before", 2},
		{"CSI private mode with intermediate", "a\x1b[?25lb\x1b[1 qc", "abc", 2},
		{"OSC 8 hyperlink keeps its text, not its URL", "see \x1b]8;;https://evil.example/x?d=1\x07the docs\x1b]8;;\x07.", "see the docs.", 2},
		{"OSC 8 ended by ST", "\x1b]8;id=1;https://evil.example/\x1b\\click\x1b]8;;\x1b\\", "click", 2},
		{"OSC title", "\x1b]0;pwned\x07prompt$ ", "prompt$ ", 1},
		{"unterminated OSC: only the introducer goes", "\x1b]8;;https://evil.example/", "8;;https://evil.example/", 1},
		{"DCS and APC strings", "a\x1bP1$r\x1b\\b\x1b_payload\x1b\\c", "abc", 2},
		{"two-byte escapes", "a\x1b7b\x1bcc\x1b(Bd", "abcd", 3},
		{"lone ESC at the end", "end\x1b", "end", 1},
		{"C1 CSI and OSC", "a\u009b31mb\u009d8;;https://x.example/\u009cc", "abc", 2},
		{"C0 controls, DEL and C1", "a\x00b\x07c\x08d\x0be\x0cf\x7fg\u0085h", "abcdefgh", 7},
		{"tab, line feed, carriage return kept", "a\tb\r\nc", "a\tb\r\nc", 0},
		{"printable and non-ASCII kept", "naïve — 日本 ✓ [0m ]8;;", "naïve — 日本 ✓ [0m ]8;;", 0},
		{"controls do not split a marker", "ignore\x1b[0m previous\x00 instructions", "ignore previous instructions", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rep Report
			assert.Equal(t, c.want, f.Text(c.in, &rep))
			assert.Equal(t, c.controls, rep.Controls)
			assert.Zero(t, rep.Stripped)
		})
	}
}

// keep_invisible keeps invisible characters, never control characters.
func TestControlsStrippedWhateverTheOptions(t *testing.T) {
	f, err := New(Options{})
	assert.NoError(t, err)
	var rep Report
	assert.Equal(t, "a\u200bbc", f.Text("a\u200b\x1b[2Jb\x00c", &rep))
	assert.Equal(t, 2, rep.Controls)
}

func TestNoControlByteSurvives(t *testing.T) {
	f := newFilter(t)
	var b strings.Builder
	for c := range 0x20 {
		b.WriteString("x" + string(rune(c)) + "[" + string(rune(c)) + "]")
	}
	for c := 0x7f; c <= 0x9f; c++ {
		b.WriteString("y" + string(rune(c)) + "[")
	}
	var rep Report
	out := f.Text(b.String(), &rep)
	for _, r := range out {
		assert.False(t, r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r >= 0x7f && r <= 0x9f, "%U in %q", r, out)
	}
}
