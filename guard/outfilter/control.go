package outfilter

// Terminal control sequences and control characters are removed from
// output whatever the options say: a CSI sequence (ESC [ … final byte)
// clears or rewrites what a human sees in a terminal client, an OSC 8
// hyperlink (ESC ] 8 ; ; URL BEL) turns text into a link to a hidden URL,
// and neither means anything to the model. Only tab, line feed and
// carriage return stay. A sequence goes whole (an OSC 8 link keeps its
// visible text, never its URL); a control character outside one goes
// alone.
const (
	esc = 0x1b
	bel = 0x07
	// C1 controls, U+0080 to U+009F, in their one-character forms.
	c1DCS = 0x90
	c1SOS = 0x98
	c1CSI = 0x9b
	c1ST  = 0x9c
	c1OSC = 0x9d
	c1PM  = 0x9e
	c1APC = 0x9f
)

// plainASCII marks the ASCII bytes that pass as they are: printable ones,
// tab, line feed and carriage return. Every other byte (controls, DEL,
// and the start of every non-ASCII character) needs a closer look.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = true
	}
	t['\t'], t['\n'], t['\r'] = true, true, true
	return t
}()

// controlAt reports the length of the control sequence or character at
// s[i] (rune r, n bytes long), or 0 when r is not a control.
func controlAt(s string, i int, r rune, n int) int {
	switch {
	case r == esc:
		return escapeLen(s, i)
	case r == c1CSI:
		return n + csiLen(s, i+n)
	case r == c1OSC || r == c1DCS || r == c1SOS || r == c1PM || r == c1APC:
		return n + stringLen(s, i+n)
	case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r == 0x7f, r >= 0x80 && r <= 0x9f:
		return n
	}
	return 0
}

// escapeLen is the length of the escape sequence starting at s[i], an ESC.
func escapeLen(s string, i int) int {
	if i+1 >= len(s) {
		return 1
	}
	switch c := s[i+1]; {
	case c == '[':
		return 2 + csiLen(s, i+2)
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		return 2 + stringLen(s, i+2)
	case c >= 0x20 && c <= 0x2f: // intermediates, then a final byte
		j := i + 1
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
			j++
		}
		if j < len(s) && s[j] >= 0x30 && s[j] <= 0x7e {
			j++
		}
		return j - i
	case c >= 0x30 && c <= 0x7e: // ESC 7, ESC c, ESC =, ...
		return 2
	}
	return 1
}

// csiLen is the length of a CSI sequence's body at s[i:]: parameter bytes,
// intermediate bytes and the final byte. A malformed body ends before the
// first byte that does not fit, which stays.
func csiLen(s string, i int) int {
	j := i
	for j < len(s) && s[j] >= 0x30 && s[j] <= 0x3f {
		j++
	}
	for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
		j++
	}
	if j < len(s) && s[j] >= 0x40 && s[j] <= 0x7e {
		j++
	}
	return j - i
}

// stringLen is the length of a control string's body at s[i:] (OSC, DCS,
// SOS, PM, APC), through its terminator: BEL, ESC \ or the C1 ST. An
// unterminated one is not a sequence a terminal would end: only its
// introducer goes, and what follows stays as visible text.
func stringLen(s string, i int) int {
	for j := i; j < len(s); j++ {
		switch s[j] {
		case bel:
			return j + 1 - i
		case esc:
			if j+1 < len(s) && s[j+1] == '\\' {
				return j + 2 - i
			}
			return 0
		case 0xc2: // C1 ST is U+009C, C2 9C in UTF-8
			if j+1 < len(s) && s[j+1] == c1ST {
				return j + 2 - i
			}
		}
	}
	return 0
}
