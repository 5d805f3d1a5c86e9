package outfilter

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/rangetable"
)

// invisibleChars holds the characters stripped from output: Unicode's format
// characters (Cf: zero-width space and joiners, bidi embeddings, overrides
// and isolates, tag characters, the BOM, soft hyphen, ...), the
// variation selectors, and the other default-ignorable code points (the
// Hangul fillers, the combining grapheme joiner, ...: letters and marks
// that render as nothing), which can smuggle text a reader does not see.
// Emoji keep what they are made of: a zero-width joiner between two emoji
// (👩‍💻) and a variation selector 15 or 16 after one.
var invisibleChars = rangetable.Merge(unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)

const (
	zwj  = '\u200d'
	vs15 = '\ufe0e'
	vs16 = '\ufe0f'
)

// strip removes control sequences and characters (see controlAt) and,
// when invisible is set, invisible characters, and counts each. Text with
// neither is returned as is, after one table lookup per byte.
func strip(s string, invisible bool) (out string, nInvisible, nControls int) {
	i := plainRun(s, 0)
	if i == len(s) {
		return s, 0, 0
	}
	var b strings.Builder
	changed, prev := false, rune(0)
	for j := i; j < len(s); {
		if k := plainRun(s, j); k > j {
			if changed {
				b.WriteString(s[j:k])
			}
			prev, j = rune(s[k-1]), k
			continue
		}
		r, n := utf8.DecodeRuneInString(s[j:])
		drop := controlAt(s, j, r, n)
		if drop > 0 {
			nControls++
		} else if invisible && r >= utf8.RuneSelf && unicode.Is(invisibleChars, r) && !emojiPart(r, prev, s[j+n:]) {
			drop = n
			nInvisible++
		}
		if drop > 0 {
			if !changed {
				changed = true
				b.Grow(len(s))
				b.WriteString(s[:j])
			}
			j += drop
			continue
		}
		prev = r
		if changed && r == utf8.RuneError && n == 1 {
			// An invalid byte becomes U+FFFD, as encoding/json would make
			// it: kept raw, it could join the bytes around a removed
			// control into a character (E2 17 80 8D would be U+200D).
			b.WriteRune(utf8.RuneError)
		} else if changed {
			b.WriteString(s[j : j+n])
		}
		j += n
	}
	if !changed {
		return s, 0, 0
	}
	return b.String(), nInvisible, nControls
}

// plainRun returns the end of the run of plain ASCII bytes at s[i:].
func plainRun(s string, i int) int {
	for i < len(s) && plainASCII[s[i]] {
		i++
	}
	return i
}

// emojiPart reports whether r, after prev and before rest, belongs to an
// emoji sequence.
func emojiPart(r, prev rune, rest string) bool {
	switch r {
	case vs15, vs16:
		return emoji(prev)
	case zwj:
		next, _ := utf8.DecodeRuneInString(rest)
		return emoji(prev) && emoji(next)
	}
	return false
}

// emoji approximates Extended_Pictographic, which package unicode lacks:
// other symbols (So) and the skin-tone modifiers (Sk).
func emoji(r rune) bool {
	return r >= 0x2000 && (unicode.Is(unicode.So, r) || unicode.Is(unicode.Sk, r))
}
