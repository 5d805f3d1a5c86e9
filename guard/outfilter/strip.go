package outfilter

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/rangetable"
)

// invisible holds the characters stripped from output: Unicode's format
// characters (Cf: zero-width space and joiners, bidi embeddings, overrides
// and isolates, tag characters, the BOM, soft hyphen, ...), the
// variation selectors, and the other default-ignorable code points (the
// Hangul fillers, the combining grapheme joiner, ...: letters and marks
// that render as nothing), which can smuggle text a reader does not see.
// Emoji keep what they are made of: a zero-width joiner between two emoji
// (👩‍💻) and a variation selector 15 or 16 after one.
var invisible = rangetable.Merge(unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)

const (
	zwj  = '\u200d'
	vs15 = '\ufe0e'
	vs16 = '\ufe0f'
)

// stripInvisible removes invisible characters; ASCII text is returned as is.
func stripInvisible(s string) (string, int) {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	if i == len(s) {
		return s, 0
	}
	var b strings.Builder
	n, prev := 0, rune(0)
	for j, r := range s[i:] {
		if r >= utf8.RuneSelf && unicode.Is(invisible, r) && !emojiPart(r, prev, s[i+j+utf8.RuneLen(r):]) {
			if n == 0 {
				b.Grow(len(s))
				b.WriteString(s[:i+j])
			}
			n++
			continue
		}
		prev = r
		if n > 0 {
			b.WriteRune(r)
		}
	}
	if n == 0 {
		return s, 0
	}
	return b.String(), n
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
