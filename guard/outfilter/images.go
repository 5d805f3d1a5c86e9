package outfilter

import "strings"

// WarnImage is the warning of a result in which markdown images to an
// outside host were defanged.
const WarnImage = "markdown image to an outside host"

// A markdown image is fetched by any client that renders the text, with
// no click: ![x](https://host/p.png?d=DATA) carries DATA to host. The
// filter defangs each one whose address is not plainly local by escaping
// its bracket, `!\[x](…)`, which markdown renders as the literal text: the
// model still reads the address, no client loads it. Plain links, which
// need a click, stay.
const (
	maxAlt   = 1024 // bytes of alt text looked at
	maxLabel = 999  // CommonMark's limit on a link label
)

// maxDefangPasses bounds the passes of defangImages. Escaping a bracket
// can close an enclosing image's alt text differently (`![![](x:)` holds
// a second image once the inner one is escaped), so defanging repeats
// until nothing changes; past this many passes every `![` is escaped.
const maxDefangPasses = 4

// defangImages escapes the images of s that point outside and counts them.
func defangImages(s string, rep *Report) string {
	for range maxDefangPasses {
		out, n := defangPass(s)
		if n == 0 {
			return s
		}
		rep.Defanged += n
		rep.warn(WarnImage)
		s = out
	}
	at := unescapedImages(s)
	rep.Defanged += len(at)
	return insertBackslashes(s, at)
}

// unescapedImages returns the offsets of the `[` of every unescaped `![`.
func unescapedImages(s string) []int {
	var at []int
	for i := 0; ; {
		k := strings.Index(s[i:], "![")
		if k < 0 {
			return at
		}
		i += k + 2
		if !escaped(s, i-2) {
			at = append(at, i-1)
		}
	}
}

// insertBackslashes puts a backslash before each offset of at, in order.
func insertBackslashes(s string, at []int) string {
	if len(at) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(at))
	pos := 0
	for _, a := range at {
		b.WriteString(s[pos:a])
		b.WriteByte('\\')
		pos = a
	}
	b.WriteString(s[pos:])
	return b.String()
}

// defangPass escapes, in one pass, the images of s that point outside,
// and says how many.
func defangPass(s string) (string, int) {
	if !strings.Contains(s, "![") {
		return s, 0
	}
	var defs map[string]string // reference definitions, read once if needed
	var at []int               // offsets of the `[` to escape
	for i := 0; ; {
		k := strings.Index(s[i:], "![")
		if k < 0 {
			break
		}
		i += k + 2
		if escaped(s, i-2) { // `\![` is already text
			continue
		}
		dest, isRef, ok := imageTarget(s, i)
		if !ok {
			continue
		}
		if isRef {
			if defs == nil {
				defs = definitions(s)
			}
			if dest, ok = defs[normLabel(dest)]; !ok {
				continue
			}
		}
		if !localURL(dest) {
			at = append(at, i-1)
		}
	}
	return insertBackslashes(s, at), len(at)
}

// escaped reports whether s[i] follows an odd number of backslashes.
func escaped(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// imageTarget reads what follows `![` at s[i:]: the alt text, then an
// inline destination `(url …)` or a reference `[label]`, `[]` or none
// (the alt text is the label). isRef says dest is a label.
func imageTarget(s string, i int) (dest string, isRef, ok bool) {
	end := closingBracket(s, i, maxAlt)
	if end < 0 {
		return "", false, false
	}
	alt, rest := s[i:end], s[end+1:]
	switch {
	case strings.HasPrefix(rest, "("):
		return inlineDest(rest[1:]), false, true
	case strings.HasPrefix(rest, "["):
		if e := closingBracket(rest, 1, maxLabel); e > 1 {
			return rest[1:e], true, true
		}
	}
	return alt, true, true
}

// closingBracket finds the `]` closing the bracket opened before s[i],
// nested brackets and escapes allowed, within limit bytes.
func closingBracket(s string, i, limit int) int {
	depth := 0
	for j := i; j < len(s) && j-i < limit; j++ {
		switch s[j] {
		case '\\':
			j++
		case '[':
			depth++
		case ']':
			if depth == 0 {
				return j
			}
			depth--
		}
	}
	return -1
}

// inlineDest is the destination at the start of s, after `(`: white space
// (one line break included), then `<…>` or up to white space or `)`.
func inlineDest(s string) string {
	s = strings.TrimLeft(s, " \t\r\n")
	if strings.HasPrefix(s, "<") {
		if e := strings.IndexAny(s, ">\n"); e > 0 {
			return s[1:e]
		}
		return s[1:]
	}
	if e := strings.IndexAny(s, " \t\r\n)"); e >= 0 {
		return s[:e]
	}
	return s
}

// definitions reads the link reference definitions of s,
// `[label]: destination` at the start of a line (up to three spaces in),
// first one wins as in CommonMark.
func definitions(s string) map[string]string {
	defs := map[string]string{}
	for line := range strings.Lines(s) {
		t := strings.TrimLeft(line, " ")
		if len(line)-len(t) > 3 || !strings.HasPrefix(t, "[") {
			continue
		}
		e := closingBracket(t, 1, maxLabel)
		if e < 1 || !strings.HasPrefix(t[e+1:], ":") {
			continue
		}
		label := normLabel(t[1:e])
		if _, seen := defs[label]; !seen {
			defs[label] = inlineDest(t[e+2:])
		}
	}
	return defs
}

// normLabel matches labels as CommonMark does, case and white space folded.
func normLabel(l string) string { return strings.ToLower(strings.Join(strings.Fields(l), " ")) }

// localURL reports whether an image's address plainly stays on the page's
// own host: a relative path without a scheme, without `//` or `\\` in
// front (protocol-relative), and without `&` (a character reference such
// as `&#58;` can spell a scheme's colon). An empty one loads nothing.
func localURL(u string) bool {
	if strings.ContainsAny(u, ":&") {
		return false
	}
	return len(u) < 2 || !(u[0] == '/' || u[0] == '\\') || !(u[1] == '/' || u[1] == '\\')
}
