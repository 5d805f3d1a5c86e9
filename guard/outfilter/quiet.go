package outfilter

import (
	"bytes"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// A JSON document is nearly always quiet: no string in it holds anything
// any step of the filter acts on. JSON then checks its strings where they
// are, in the document's bytes, without unquoting them into copies: one
// pass per string that steps the keyword automaton and watches for what
// the other steps need (see quietString). A string it cannot vouch for
// that way (a keyword, non-ASCII text, base64) goes through member, as on
// the full path; only when member changes or reports something does the
// whole document go down the full path (readTokens and member), which
// decides. The quiet path never changes anything itself.
// TestQuietAgreesWithFullPath and FuzzQuietAgreesWithFullPath hold the
// two paths to the same answers.

// quietDoc is the state of one quietJSON.
type quietDoc struct {
	f       *Filter
	dec     *quietDecoder
	objects []bool // per open container: is it an object?
	name    []byte // the last member name, quoted form
	value   walker // the automaton's state after `"name": "`, for the value that follows
	scratch Report // what member reported on the strings it was asked about
	buf     []byte // for unquoting
	quote   []byte // a string's quoted form with its quotes, for unquoting
	hits    hitState
}

// quietJSON reports whether JSON(raw, rep) would return raw itself and add
// nothing to rep but the rule checks it costs, which it then adds. false
// means "not known": raw may still be quiet, or not JSON at all; rep is
// then untouched.
func (f *Filter) quietJSON(raw []byte, rep *Report) bool {
	d := quietDecoders.Get().(*quietDecoder)
	defer d.release()
	dec := d.reset(raw)
	q := quietDoc{f: f, dec: d, scratch: Report{checks: rep.checks}}
	for {
		switch dec.PeekKind() {
		case '"':
			v, err := dec.ReadValue()
			if err != nil {
				return false
			}
			_, n := dec.StackIndex(dec.StackDepth())
			if !q.str(v[1:len(v)-1], n) {
				return false
			}
		case '{', '[':
			tok, err := dec.ReadToken()
			if err != nil {
				return false
			}
			q.objects = append(q.objects, tok.Kind() == '{')
		case '}', ']':
			if _, err := dec.ReadToken(); err != nil {
				return false
			}
			q.objects = q.objects[:len(q.objects)-1]
		default: // numbers and literals hold nothing to filter; errors end here
			if _, err := dec.ReadToken(); err != nil {
				return false
			}
		}
		if len(q.objects) == 0 {
			if endOfInput(dec) != nil || q.scratch.checks > MaxChecks {
				return false
			}
			rep.checks = q.scratch.checks
			return true
		}
	}
}

// quietDecoder is a decoder reading a document in place, recycled: the
// quiet path runs on every structured result.
type quietDecoder struct {
	buf  bytes.Buffer // a *bytes.Buffer is read without a copy
	dec  *jsontext.Decoder
	text []byte // a string's decoded bytes (keywordDFA.escaped)
}

var quietDecoders = sync.Pool{New: func() any {
	d := &quietDecoder{}
	d.dec = jsontext.NewDecoder(&d.buf, jsonOptions...)
	return d
}}

// reset readies the decoder for raw.
func (d *quietDecoder) reset(raw []byte) *jsontext.Decoder {
	d.buf = *bytes.NewBuffer(raw)
	d.dec.Reset(&d.buf, jsonOptions...)
	return d.dec
}

// release drops the document and recycles the decoder.
func (d *quietDecoder) release() {
	d.buf = bytes.Buffer{}
	if cap(d.text) > 64<<10 {
		d.text = nil // a large string's: not kept
	}
	d.dec.Reset(&d.buf, jsonOptions...)
	quietDecoders.Put(d)
}

// str checks one string, quoted form s, the nth item of its container.
func (q *quietDoc) str(s []byte, n int64) bool {
	f, inObject := q.f, len(q.objects) > 0 && q.objects[len(q.objects)-1]
	switch {
	case inObject && n%2 == 1: // a member name
		q.name = append(q.name[:0], s...)
		if !q.quietString(s, walker{}, false) && !q.member("", s) {
			return false
		}
		q.value = f.keys.literal(walker{}, `"`)
		var ok bool
		if q.value, ok = f.keys.escaped(q.value, s, nil); !ok || q.value.hit {
			q.value = walker{hit: true} // the value goes through member
			return true
		}
		q.value = f.keys.literal(q.value, `": "`)
		return true
	case inObject: // a member's value
		if q.value.hit || !q.quietString(s, q.value, true) {
			name, _ := jsontext.AppendUnquote(nil, quoted(nil, q.name))
			return q.member(string(name), s)
		}
		return true
	default: // in an array, or the document itself
		return q.quietString(s, walker{}, false) || q.member("", s)
	}
}

// member runs the full path's member on the string whose quoted form is s
// and reports whether it changed and reported nothing.
func (q *quietDoc) member(name string, s []byte) bool {
	var text string
	if bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s) {
		q.quote = quoted(q.quote, s)
		q.buf, _ = jsontext.AppendUnquote(q.buf[:0], q.quote) // invalid UTF-8 becomes U+FFFD, as in readTokens
		text = string(q.buf)
	} else {
		text = string(s)
	}
	out := q.f.member(name, text, &q.scratch)
	return out == text && q.scratch.quiet()
}

// quoted puts the quotes back around a string's quoted form, in dst's
// array when it is large enough.
func quoted(dst, s []byte) []byte {
	return append(append(append(dst[:0], '"'), s...), '"')
}

// quietString reports whether the string whose quoted form (without the
// quotes) is s passes every step of member unchanged and unreported,
// with the automaton started at w; member values also end in a quote.
// It decides on what it is sure of and gives up (false) on anything
// rarer: a \u escape (but those of <, > and &), a \b, \f or \/ escape,
// a byte outside printable ASCII, a
// keyword that may lead to a secret (see vouch) or a marker, base64 of
// text, "![", or a run of blankStride blank characters. The rule checks
// it runs are added to the report's.
func (q *quietDoc) quietString(s []byte, w walker, quoted bool) bool {
	f := q.f
	w, ok := q.walk(w, s)
	if !ok || w.hit || quoted && f.keys.literal(w, `"`).hit {
		return false
	}
	q.scratch.checks = q.hits.spent
	return !bytes.Contains(s, []byte("![")) && (!mayBeBase64(s) || binaryBase64(q.text(s)))
}

// text is s as text: the copy vouch made of it, when it made one of s
// itself (random base64 nearly always holds a keyword), else a new one.
func (q *quietDoc) text(s []byte) string {
	h := &q.hits
	if h.text != "" && len(h.s) == len(s) && &h.s[0] == &s[0] {
		return h.text
	}
	return string(s)
}

// walk is keywordDFA.escaped for quietString, with q.hits set for vouch.
// A long string of plain bytes is walked in lanes as it is; one with
// blanks or escapes is first decoded (unescapeQuiet) into the decoder's
// buffer and walked in lanes there, and vouch then sees the decoded text,
// which the full path's rules read, at the offsets the lanes give.
func (q *quietDoc) walk(w walker, s []byte) (walker, bool) {
	keys := q.f.keys
	q.hits = hitState{s: s, escapes: bytes.IndexByte(s, '\\') >= 0, spent: q.scratch.checks}
	switch {
	case !keys.laned(len(s)) || q.dec == nil:
		return keys.serial(w, s, q.vouch)
	case allPlain(s):
		return keys.plain(w, s, q.vouch), true
	}
	text, ok := unescapeQuiet(q.dec.text[:0], s)
	q.dec.text = text
	if !ok {
		return w, false
	}
	if !keys.laned(len(text)) {
		return keys.serial(w, s, q.vouch)
	}
	q.hits.s, q.hits.escapes = text, false
	return keys.plain(w, text, q.vouch), true
}

// hitState is what vouch needs of the string quietString walks.
type hitState struct {
	s       []byte // the quoted form, or the decoded text walk walked
	text    string // s as text, made at the first hit
	escapes bool   // s holds an escape: offsets in s are not the text's
	spent   int    // the report's checks, with those run so far
}

// vouch decides a keyword hit, the patterns of state ending at s[end],
// the way scan would: true when each is a keyword whose rules all run
// anchored at it (literalForm, semiGenericForm, the generic rule, the
// JWT) and none of them matches there. Random base64 nearly always holds
// "sk" or "ey" (Twilio's and the JWT's keywords), which would otherwise
// cost member's whole path. A marker or tool name, a rule with windows,
// a keyword begun before the string, an escape in it, a match or too
// many checks: false. A call verb is vouched for unless nearCall warns. (An escape in the decoded text walk walked is no
// escape: its offsets are the text's.)
func (q *quietDoc) vouch(end int, state int32) bool {
	f, h := q.f, &q.hits
	if h.escapes {
		return false
	}
	if h.text == "" {
		h.text = string(h.s)
	}
	for _, p := range f.keys.out[state/int32(f.keys.nclass)] {
		at := end + 1 - f.keys.lens[p]
		if at < 0 {
			return false
		}
		if f.verb(p) {
			if f.nearCall(h.text, at, end+1) != "" {
				return false
			}
			continue
		}
		if a, ok := f.anchor(p); ok {
			if w, _ := f.phraseAt(h.text, a, at, end+1, nil); w != "" {
				return false
			}
			continue
		}
		if int(p) >= f.nKeys || !f.missesAt(h.text, p, at, &h.spent) {
			return false
		}
	}
	return true
}

// verb reports whether pattern p is one of the call verbs: "use" and
// "run" are in much ordinary text, which must stay on the quiet path.
func (f *Filter) verb(p int32) bool {
	return int(p)-f.nKeys >= len(f.markers)+len(f.anchors)+len(f.tools)
}

// anchor reports whether pattern p is a phrase class's anchor, and which.
func (f *Filter) anchor(p int32) (int, bool) {
	a := int(p) - f.nKeys - len(f.markers)
	return a, a >= 0 && a < len(f.anchors)
}

// missesAt reports whether every rule of keyword p runs anchored and
// finds nothing at its hit at, counting the checks as scan does.
func (f *Filter) missesAt(text string, p int32, at int, checks *int) bool {
	for _, ri := range f.hits[p] {
		fast := f.rules[ri].fast
		if fast == nil {
			return false
		}
		if !fast.candidate(text, at, at+f.keys.lens[p]) {
			continue
		}
		if *checks++; *checks > MaxChecks || fast.match(text, at) != nil {
			return false
		}
	}
	return true
}

// mayBeBase64 is a cheap necessary condition of encodingOf on the
// decoded string: long enough, and only base64 bytes (a backslash, which
// any escape starts with, is not one; the \/ escape is refused elsewhere).
func mayBeBase64(s []byte) bool {
	if len(s) < minBase64 {
		return false
	}
	for _, c := range s {
		if base64Class[c] == 0 && c != '=' {
			return false
		}
	}
	return true
}

// binaryBase64 reports whether inBase64 leaves s as it is because s is not
// strict base64 of text.
func binaryBase64(s string) bool {
	_, _, text := decodeText(s)
	return !text
}

// walker is the state of a walk of the keyword automaton fed piece by
// piece: where it is, and whether a pattern ended on the way.
type walker struct {
	state int32
	hit   bool
}

// literal feeds the bytes of s as they are.
func (d *keywordDFA) literal(w walker, s string) walker {
	for i := range len(s) {
		if w.state = d.next[w.state+int32(d.class[s[i]])]; w.state < 0 {
			w.state, w.hit = -w.state, true
		}
	}
	return w
}

// Byte kinds for escaped: plain ASCII, white space among it, the
// backslash that starts an escape, and the rest (0), which it gives up on.
const (
	qPlain = iota + 1
	qBlank
	qEscape
)

var quietKinds = func() (t [256]uint8) {
	for c := range 256 {
		if plainASCII[c] {
			t[c] = qPlain
		}
	}
	t[' '], t['\t'], t['\n'], t['\r'] = qBlank, qBlank, qBlank, qBlank
	t['\\'] = qEscape
	return t
}()

// quietEscapes are the escapes escaped decodes: each gives a byte that is
// plain (see plainASCII) and not in the base64 alphabet.
var quietEscapes = [256]byte{'n': '\n', 't': '\t', 'r': '\r', '"': '"', '\\': '\\'}

// quietEscape decodes the escape at s[i], a backslash: the byte it stands
// for and its length, or a length of 0 for one escaped cannot vouch for.
// Besides quietEscapes, these are the \u escapes encoding/json writes for
// <, > and & (structured content is HTML-safe JSON), which are plain and
// not in the base64 alphabet either.
func quietEscape(s []byte, i int) (c byte, n int) {
	if i+1 >= len(s) {
		return 0, 0
	}
	if c = quietEscapes[s[i+1]]; c != 0 {
		return c, 2
	}
	if s[i+1] != 'u' || i+6 > len(s) || s[i+2] != '0' || s[i+3] != '0' {
		return 0, 0
	}
	switch string(s[i+4 : i+6]) {
	case "3c", "3C":
		return '<', 6
	case "3e", "3E":
		return '>', 6
	case "26":
		return '&', 6
	}
	return 0, 0
}

// escaped feeds the string whose quoted form is s, decoding its escapes,
// and stops at the first hit that vouch, when given, does not pass (it
// gets the hit's last byte and state). ok is false when s holds a byte
// or escape it cannot vouch for (see quietString), or a run of
// blankStride blank bytes (collapseBlank would look at it).
func (d *keywordDFA) escaped(w walker, s []byte, vouch func(end int, state int32) bool) (_ walker, ok bool) {
	if d.laned(len(s)) && allPlain(s) {
		return d.plain(w, s, vouch), true
	}
	return d.serial(w, s, vouch)
}

// unescapeQuiet appends to dst the bytes serial feeds the automaton for
// s: s with its escapes decoded. ok is false where serial gives up (with
// no hit reported, where serial may report one first: quietString gives
// up on the string either way).
func unescapeQuiet(dst, s []byte) (_ []byte, ok bool) {
	dst = slices.Grow(dst, len(s))
	blanks := 0
	for i := 0; i < len(s); {
		if j := plainEnd(s, i); j > i {
			dst, blanks, i = append(dst, s[i:j]...), 0, j
			continue
		}
		c := s[i]
		switch quietKinds[c] {
		case qBlank:
			i++
		case qEscape:
			e, n := quietEscape(s, i)
			if n == 0 {
				return dst, false
			}
			c, i = e, i+n
			if quietKinds[c] != qBlank {
				dst, blanks = append(dst, c), 0
				continue
			}
		default:
			return dst, false
		}
		if blanks++; blanks >= blankStride {
			return dst, false
		}
		dst = append(dst, c)
	}
	return dst, true
}

// plainEnd is the end of the run of plain bytes at s[i:].
func plainEnd(s []byte, i int) int {
	for i < len(s) && quietKinds[s[i]] == qPlain {
		i++
	}
	return i
}

// serial is escaped one byte after the other.
func (d *keywordDFA) serial(w walker, s []byte, vouch func(end int, state int32) bool) (_ walker, ok bool) {
	state, blanks := w.state, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch quietKinds[c] {
		case qPlain:
			blanks = 0
		case qBlank:
			if blanks++; blanks >= blankStride {
				return w, false
			}
		case qEscape:
			e, n := quietEscape(s, i)
			if n == 0 {
				return w, false
			}
			if c, i = e, i+n-1; quietKinds[c] == qBlank {
				if blanks++; blanks >= blankStride {
					return w, false
				}
			} else {
				blanks = 0
			}
		default:
			return w, false
		}
		if state = d.next[state+int32(d.class[c])]; state < 0 {
			if state = -state; vouch == nil || !vouch(i, state) {
				return walker{state: state, hit: true}, true
			}
		}
	}
	return walker{state: state}, true
}

// shortestLaned is the shortest string walked in lanes (see plain and
// lanes).
const shortestLaned = 512

// laned reports whether a string of n bytes is walked in lanes: long
// enough to be worth it, and for each lane to start d.depth bytes before
// its quarter.
func (d *keywordDFA) laned(n int) bool {
	return n >= max(shortestLaned, 4*d.depth)
}

// allPlain reports whether s holds only plain bytes: no blank, no escape.
func allPlain(s []byte) bool {
	for _, c := range s {
		if quietKinds[c] != qPlain {
			return false
		}
	}
	return true
}

// plain is escaped for a string of plain bytes (or the decoded bytes of
// one with escapes and blanks): four walks side by side,
// the first over the first quarter from w, each other over its quarter
// from the root, started the longest pattern's length before it. A walk
// waits on each step's table lookup for the next, and the lookups of a
// call's first walk mostly miss the cache, so four run in about the time
// of one. The automaton's state after a byte depends only on the last
// d.depth bytes, so a later walk's states in its quarter are the ones a
// single walk would have; it reports only the hits that end there. Hits
// go to vouch lane by lane as they come, not in order: the walk's answer
// does not depend on the order (the first hit vouch refuses ends it).
func (d *keywordDFA) plain(w walker, s []byte, vouch func(end int, state int32) bool) walker {
	m1, m2, m3 := quarters(len(s), d.depth)
	a, b, c, e := 0, m1-d.depth, m2-d.depth, m3-d.depth
	sa, sb, sc, se := w.state, int32(0), int32(0), int32(0)
	for ; a < m1; a, b, c, e = a+1, b+1, c+1, e+1 {
		sa = d.next[sa+int32(d.class[s[a]])]
		sb = d.next[sb+int32(d.class[s[b]])]
		sc = d.next[sc+int32(d.class[s[c]])]
		se = d.next[se+int32(d.class[s[e]])]
		if sa|sb|sc|se >= 0 {
			continue
		}
		if sa < 0 {
			if sa = -sa; vouch == nil || !vouch(a, sa) {
				return walker{state: sa, hit: true}
			}
		}
		if sb < 0 {
			if sb = -sb; b >= m1 && (vouch == nil || !vouch(b, sb)) {
				return walker{state: sb, hit: true}
			}
		}
		if sc < 0 {
			if sc = -sc; c >= m2 && (vouch == nil || !vouch(c, sc)) {
				return walker{state: sc, hit: true}
			}
		}
		if se < 0 {
			if se = -se; e >= m3 && (vouch == nil || !vouch(e, se)) {
				return walker{state: se, hit: true}
			}
		}
	}
	for ; e < len(s); e++ {
		if se = d.next[se+int32(d.class[s[e]])]; se < 0 {
			if se = -se; vouch == nil || !vouch(e, se) {
				return walker{state: se, hit: true}
			}
		}
	}
	return walker{state: se}
}

// quarters are where the four walks of a string of n plain bytes begin
// to report (each but the first starts depth bytes before): each walk
// takes the same number of steps, (n+3*depth)/4, but the last, which
// takes up to three more. n must be at least 4*depth.
func quarters(n, depth int) (m1, m2, m3 int) {
	steps := (n + 3*depth) / 4
	return steps, 2*steps - depth, 3*steps - 2*depth
}
