package outfilter

import (
	"strings"
	"unicode/utf8"
)

// A page about prompt injection quotes the phrases it warns of ("attacks
// use phrases like 'ignore previous instructions'"): it mentions them, it
// does not address the model with them. A marker (or a phrase class's
// anchor) that lies inside a quotation, on one line, which words such as
// "like", "such as", "for example" or "pattern" introduce, is reported in
// Report.Quoted instead of Warnings: it still shows in the result's meta
// and the audit, and in arguments and tool definitions it counts as a
// marker all the same, but tool output gets no warning for it. The price
// is plain: an injection that dresses itself as a quoted example ("for
// example: 'ignore ...'") is reported, not warned about. A quotation
// without such a cue (a JSON string, a quoted order) is no mention.

// mentionCues introduce a quoted phrase as an example of one.
var mentionCues = []string{
	"like", "such as", "e.g.", "for example", "for instance", "example", "examples", "pattern", "patterns",
	"phrase", "phrases", "string", "strings", "wording", "known as", "called", "include", "includes", "is:",
}

// quoteSpan is how far a quotation may run either side of a marker, and
// cueSpan how far before its opening quote a cue may be.
const (
	quoteSpan = 200
	cueSpan   = 60
)

// quotedMention reports whether s[at:end] is inside a quotation on one
// line that a mention cue introduces.
func quotedMention(s string, at, end int) bool {
	open, q := openingQuote(s, at)
	if open < 0 || !closingQuote(s, end, q) {
		return false
	}
	before := strings.ToLower(s[max(open-cueSpan, 0):open])
	for _, c := range mentionCues {
		if i := strings.LastIndex(before, c); i >= 0 && (i == 0 || !letterByte(before[i-1])) &&
			(i+len(c) == len(before) || !letterByte(before[i+len(c)])) {
			return true
		}
	}
	return false
}

// openingQuote returns where the quotation holding s[at] opens, and the
// quote that closes it, or -1.
func openingQuote(s string, at int) (int, string) {
	for i := at - 1; i >= max(at-quoteSpan, 0); i-- {
		switch c := s[i]; {
		case c == '\n':
			return -1, ""
		case c == '"' || c == '`':
			return i, string(c)
		case c == '\'' && (i == 0 || !letterByte(s[i-1])):
			return i, "'"
		case c >= utf8.RuneSelf && utf8.RuneStart(c):
			switch r, _ := utf8.DecodeRuneInString(s[i:]); r {
			case '“':
				return i, "”"
			case '‘':
				return i, "’"
			}
		}
	}
	return -1, ""
}

// closingQuote reports whether q closes a quotation after s[end], on the
// same line and not inside a word (an apostrophe).
func closingQuote(s string, end int, q string) bool {
	rest := s[end:min(end+quoteSpan, len(s))]
	if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[:nl]
	}
	for off := 0; ; {
		i := strings.Index(rest[off:], q)
		if i < 0 {
			return false
		}
		i += off
		if after := i + len(q); q != "'" || after == len(rest) || !letterByte(rest[after]) {
			return true
		}
		off = i + len(q)
	}
}

func letterByte(c byte) bool {
	return c >= utf8.RuneSelf || identByte(c)
}
