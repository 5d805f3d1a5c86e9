package socket

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// What the terminal approver prints comes from the server, and much of it
// from whoever called: the identity is an OAuth subject the identity
// provider chose, the preview the model's arguments. A terminal acts on
// some characters instead of showing them: C0 and C1 controls start escape
// sequences (a window title, a cleared screen, fake rows), format
// characters (Cf: the bidi overrides, zero-width ones) reorder or hide
// text, and U+2028/U+2029 break lines where some terminals and viewers
// honour them. Every field printed goes through oneLine or lines, on the
// client side too, so a server's own escaping need not be trusted.

// oneLine escapes s for a single-line field (a table cell, "identity:"):
// every character a terminal acts on, newline and tab included, becomes
// \u{XXXX}, as the server's display escaping writes it.
func oneLine(s string) string { return escape(s, false) }

// lines escapes s as oneLine does but keeps its newlines and tabs, for a
// field shown as a block (the action's preview).
func lines(s string) string { return escape(s, true) }

func escape(s string, keepBreaks bool) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return hidden(r, keepBreaks) }) {
		return s
	}
	var b strings.Builder
	for _, r := range s { // invalid UTF-8 (a lone 0x9b byte) arrives as, and is written as, U+FFFD
		if hidden(r, keepBreaks) {
			fmt.Fprintf(&b, "\\u{%04X}", r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// hidden reports whether a terminal would act on r rather than show it.
func hidden(r rune, keepBreaks bool) bool {
	if keepBreaks && (r == '\n' || r == '\t') {
		return false
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

// jsonSafe escapes, in JSON the encoder wrote, the characters it leaves
// raw that a terminal acts on (C1 controls, Cf; encoding/json already
// escapes C0, U+2028 and U+2029). They occur only inside strings, so a
// \uXXXX escape (a surrogate pair above U+FFFF) keeps the JSON valid and
// its values the same.
func jsonSafe(js []byte) []byte {
	s := string(js)
	if !strings.ContainsFunc(s, func(r rune) bool { return hidden(r, true) }) {
		return js
	}
	var b strings.Builder
	for _, r := range s {
		if !hidden(r, true) {
			b.WriteRune(r)
			continue
		}
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		} else {
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return []byte(b.String())
}
