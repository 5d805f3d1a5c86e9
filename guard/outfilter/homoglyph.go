package outfilter

import (
	"unicode"
	"unicode/utf8"
)

// A word spelled with letters of two scripts that share look-alikes
// ("cаt" with a Cyrillic а, "pаypal" with one) reads as one word to a
// human and to the model, and as another to every string match: the
// disguise of a command, a path or a marker. Words of one script (Russian
// text, Greek formulas) are ordinary; a word that mixes Latin with
// Cyrillic, Greek, Armenian or Cherokee, the scripts whose letters
// Unicode's confusables list (UTS #39) maps onto Latin ones, is what the
// mixed-script check of UTS #39 (and browsers' IDN display rules) flags.
// It needs no table of look-alikes: the scripts come from package unicode.

// lookalikeScripts are the scripts with letters confusable with Latin.
var lookalikeScripts = []*unicode.RangeTable{unicode.Cyrillic, unicode.Greek, unicode.Armenian, unicode.Cherokee}

// warnMixedScript is the warning for such a word, followed by the word.
const warnMixedScript = "mixed-script word (homoglyph): "

// mixedScript returns a warning naming the first word of s that mixes
// Latin letters with letters of a look-alike script, or "". ASCII text
// costs one table lookup per byte.
func mixedScript(s string) string {
	first := plainRun(s, 0)
	if first == len(s) {
		return ""
	}
	for first > 0 && s[first-1] < utf8.RuneSelf && unicode.IsLetter(rune(s[first-1])) {
		first-- // the start of the word the first non-ASCII byte is in
	}
	start, latin, other := -1, false, false
	for i := first; i <= len(s); {
		r, n := utf8.RuneError, 1
		if i < len(s) {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		if i < len(s) && unicode.IsLetter(r) {
			if start < 0 {
				start, latin, other = i, false, false
			}
			switch {
			case r < utf8.RuneSelf || unicode.Is(unicode.Latin, r):
				latin = true
			case lookalike(r):
				other = true
			}
		} else if start >= 0 {
			if latin && other {
				return warnMixedScript + quoteFound(s[start:i])
			}
			start = -1
		}
		i += n
	}
	return ""
}

func lookalike(r rune) bool {
	for _, t := range lookalikeScripts {
		if unicode.Is(t, r) {
			return true
		}
	}
	return false
}
