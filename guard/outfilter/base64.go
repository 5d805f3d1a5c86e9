package outfilter

import (
	"encoding/base64"
	"unicode/utf8"
)

// A string that is wholly base64 of text (retrieve_artifact's base64
// content, a resource blob, a structured field a tool encoded) is a secret
// the model can read by decoding it, so the filter decodes it, filters the
// text and, when that changed anything, writes the filtered text back in
// the same encoding. Binary payloads (the decoded bytes are not text) and
// text that needs no change keep their exact bytes.
const (
	// minBase64 is the shortest string decoded, 18 bytes: the shortest
	// token a rule knows by its shape alone (an AWS key ID) has 20.
	minBase64 = 24
	// probeBase64 is how much of a long string is decoded first: binary
	// (an image, an archive) shows in its first bytes, and is not
	// decoded further.
	probeBase64 = 4096
)

// base64Class sorts the bytes of the two base64 alphabets: 1 for those
// both share (A-Z a-z 0-9), 2 for the standard one's (+ /), 3 for the
// URL-safe one's (- _), 0 for the rest.
var base64Class = func() (t [256]uint8) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") {
		t[c] = 1
	}
	t['+'], t['/'], t['-'], t['_'] = 2, 2, 3, 3
	return t
}()

// encodingOf returns the encoding s is strictly written in, or nil: one
// alphabet (standard, or URL-safe), padded with '=' to a multiple of 4, or
// unpadded (raw) with a length that is not. A padding-free string whose
// length is a multiple of 4 is read as padded in the standard alphabet
// and raw in the URL-safe one, each's usual form, so that a filtered
// text written back keeps it. Line breaks, which encoding/base64 skips,
// are refused: such a string is not one token.
func encodingOf(s string) *base64.Encoding {
	if len(s) < minBase64 {
		return nil
	}
	body := s
	for i := 0; i < 2 && body[len(body)-1] == '='; i++ {
		body = body[:len(body)-1]
	}
	padded := len(body) < len(s)
	if padded && len(s)%4 != 0 || len(s)%4 == 1 {
		return nil
	}
	url, ok := alphabetOf(body)
	if !ok {
		return nil
	}
	form := 0
	if !padded && (len(s)%4 != 0 || url == 1) {
		form = 1
	}
	return strictEncodings[url][form]
}

// alphabetOf reports which alphabet s is written in, as strictEncodings'
// first index: 1 for URL-safe, 0 for standard (also when s holds neither's
// own bytes). ok is false when s holds a byte of neither, or of both.
func alphabetOf(s string) (url int, ok bool) {
	var seen uint8 // bit 1: standard-only bytes, bit 2: URL-only bytes
	for i := range len(s) {
		switch base64Class[s[i]] {
		case 0:
			return 0, false
		case 2:
			seen |= 1
		case 3:
			seen |= 2
		}
	}
	if seen == 3 {
		return 0, false
	}
	return int(seen >> 1), true
}

// strictEncodings are the four strict encodings, [URL-safe][raw], made
// once: Strict and WithPadding return new copies.
var strictEncodings = [2][2]*base64.Encoding{
	{base64.StdEncoding.Strict(), base64.RawStdEncoding.Strict()},
	{base64.URLEncoding.Strict(), base64.RawURLEncoding.Strict()},
}

// decodeText returns the text s encodes, when s is strict base64 (see
// encodingOf) of text (see textLike).
func decodeText(s string) (string, *base64.Encoding, bool) {
	// Binary (random bytes, an image, an archive) is invalid UTF-8 within
	// its first few bytes, so a short head refuses most of it before the
	// whole is read; invalid there, the whole is not textLike.
	if binaryHead(s) {
		return "", nil, false
	}
	enc := encodingOf(s)
	if enc == nil {
		return "", nil, false
	}
	if head, err := enc.DecodeString(s[:min(len(s), 64)&^3]); err == nil && !mostlyUTF8(wholeRunes(head)) {
		return "", nil, false
	}
	if len(s) > probeBase64 {
		head, err := enc.DecodeString(s[:probeBase64]) // a multiple of 4, before any padding
		if err != nil || !textLike(string(head), false) {
			return "", nil, false
		}
	}
	data, err := enc.DecodeString(s)
	if err != nil {
		return "", nil, false
	}
	if text := string(data); textLike(text, true) {
		return text, enc, true
	}
	return "", nil, false
}

// binaryHead reports whether s begins with 64 bytes of one base64
// alphabet (before any padding) that decode to bytes that are mostly not
// UTF-8 (see mostlyUTF8). decodeText
// then refuses s, as encodingOf reads those bytes the same way or refuses
// s, without reading the rest of it.
func binaryHead(s string) bool {
	const n = 64
	if len(s) < n+4 {
		return false
	}
	url, ok := alphabetOf(s[:n])
	if !ok {
		return false
	}
	head, err := strictEncodings[url][0].DecodeString(s[:n])
	return err == nil && !mostlyUTF8(wholeRunes(head))
}

// textLike reports whether s is text: in which the bytes text does not
// hold (control bytes other than tab, line feed, form feed and carriage
// return, and bytes that are not UTF-8) are at most 1 in 20, plus one
// (retrieve_artifact writes a text file holding a single escape or NUL
// byte as base64). A whole terminal control sequence (a colour, a
// clear-screen, an OSC 8 hyperlink: see escapeLen) counts as no control
// byte: a log or a page that is dense in them is text, and exactly what
// Text must strip, while binary holds stray controls. Nor does one byte
// that is not UTF-8 (a Latin-1 "é") make text binary: it would hide the
// rest from the filter. A part (whole false) may end in the middle of a
// character.
func textLike(s string, whole bool) bool {
	if !whole {
		s = wholeRunesIn(s)
	}
	valid := utf8.ValidString(s)
	bad, most := 0, 1+len(s)/20
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			if valid {
				continue
			}
			r, n := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || n > 1 {
				i += n - 1
				continue
			}
		case !controlBytes[c]:
			continue
		case c == esc:
			if n := escapeLen(s, i); n > 1 {
				i += n - 1
				continue
			}
		}
		if bad++; bad > most {
			return false
		}
	}
	return true
}

// mostlyUTF8 reports whether b holds at most 1 in 20, plus one, bytes
// that are not UTF-8: the test of a string's first bytes, which refuses
// binary (an image, an archive, random bytes) before the whole is read.
func mostlyUTF8(b []byte) bool {
	if utf8.Valid(b) {
		return true
	}
	bad, most := 0, 1+len(b)/20
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			if bad++; bad > most {
				return false
			}
		}
		i += n
	}
	return true
}

// wholeRunes is b without a character cut at its end.
func wholeRunes(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// wholeRunesIn is wholeRunes of a string.
func wholeRunesIn(s string) string {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				return s[:i]
			}
			break
		}
	}
	return s
}

// controlBytes are the ASCII control bytes text does not hold.
var controlBytes = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = c != '\t' && c != '\n' && c != '\f' && c != '\r'
	}
	t[0x7f] = true
	return t
}()

// inBase64 filters the text s encodes, when s is base64 of text, and
// returns s re-encoded if that changed it; else s itself.
func (f *Filter) inBase64(s string, rep *Report) string {
	text, enc, ok := decodeText(s)
	if !ok {
		return s
	}
	if filtered := f.Text(text, rep); filtered != text {
		return enc.EncodeToString([]byte(filtered))
	}
	return s
}
