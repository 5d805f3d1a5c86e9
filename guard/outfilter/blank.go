package outfilter

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// WarnBlank is the warning of a result in which long runs of blank space
// were collapsed.
const WarnBlank = "text pushed out of sight by blank space"

// Text pushed out of sight: an instruction placed after thousands of
// spaces or hundreds of blank lines is off screen for a human reviewing
// the output, not for the model. Such a run is replaced by a visible
// marker saying how much was removed, and the result gets a warning.
const (
	// MaxBlankChars is the longest run of blank characters kept on one line.
	MaxBlankChars = 200
	// MaxBlankLines is the most blank lines kept in a row.
	MaxBlankLines = 20
	// blankStride: every run long enough to collapse (MaxBlankLines+2
	// line breaks at least) holds a byte at a multiple of it, so only
	// those bytes are looked at first.
	blankStride = 16
)

// collapseBlank replaces the runs of s that are too long (see MaxBlankChars
// and MaxBlankLines) by markers, and counts them. Text without a run of
// blankStride blank characters, nearly all text, is returned without
// allocating.
func collapseBlank(s string, rep *Report) string {
	i, start, end := nextRun(s, blankStride-1)
	if i < 0 {
		return s
	}
	var b strings.Builder
	pos := 0
	for ; i >= 0; i, start, end = nextRun(s, max(i, end-1)+blankStride) {
		pos = collapseRun(&b, s, pos, start, end, rep)
	}
	if pos == 0 {
		return s
	}
	b.WriteString(s[pos:])
	rep.warn(WarnBlank)
	return b.String()
}

// nextRun finds, from s[i] on and looking only at every blankStride-th
// byte, the next run of at least blankStride blank characters: the byte
// it was found at and the run's bounds, or i -1 when there is none.
func nextRun(s string, i int) (int, int, int) {
	for ; i < len(s); i += blankStride {
		if start, end := blankRun(s, i); end-start >= blankStride {
			return i, start, end
		}
	}
	return -1, 0, 0
}

// collapseRun writes s[pos:start] and the run s[start:end] to b, collapsed
// if it is too long, and returns where s continues; b is untouched (and
// pos returned) when nothing is collapsed.
func collapseRun(b *strings.Builder, s string, pos, start, end int, rep *Report) int {
	run := s[start:end]
	if breaks := lineBreaks(run); breaks-1 > MaxBlankLines {
		b.WriteString(s[pos:start])
		fmt.Fprintf(b, "\n[toolwarden: %d blank lines collapsed]\n", breaks-1)
		rep.Collapsed++
		return end
	}
	// No line holds MaxBlankChars blank characters: the common case.
	if utf8.RuneCountInString(run) <= MaxBlankChars {
		return pos
	}
	from := start
	for line := range strings.Lines(run) {
		to := from + len(strings.TrimRight(line, "\r\n"))
		if n := utf8.RuneCountInString(s[from:to]); n > MaxBlankChars {
			b.WriteString(s[pos:from])
			fmt.Fprintf(b, " [toolwarden: %d blank characters collapsed] ", n)
			rep.Collapsed++
			pos = to
		}
		from += len(line)
	}
	return pos
}

// lineBreaks counts the line breaks in a run of blank characters: LF, a
// CR not before one, and the Unicode line and paragraph separators.
func lineBreaks(run string) int {
	n := strings.Count(run, "\n") + strings.Count(run, "\u2028") + strings.Count(run, "\u2029")
	for i := strings.IndexByte(run, '\r'); i >= 0; i = strings.IndexByte(run, '\r') {
		if i+1 == len(run) || run[i+1] != '\n' {
			n++
		}
		run = run[i+1:]
	}
	return n
}

// blankRun returns the run of blank characters around s[i], empty if s[i]
// is not in one.
func blankRun(s string, i int) (int, int) {
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	if r, _ := utf8.DecodeRuneInString(s[i:]); !blank(r) {
		return i, i
	}
	start, end := i, i
	for start > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:start])
		if !blank(r) {
			break
		}
		start -= n
	}
	for end < len(s) {
		r, n := utf8.DecodeRuneInString(s[end:])
		if !blank(r) {
			break
		}
		end += n
	}
	return start, end
}

// blank reports whether r shows as nothing but space: ASCII white space,
// Unicode space separators, line and paragraph separators, and the
// Braille blank, which renders as a space in most fonts.
func blank(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\u00a0', '\u1680', '\u202f', '\u205f', '\u3000', '\u2028', '\u2029', '\u2800':
		return true
	}
	return r >= '\u2000' && r <= '\u200a'
}
