package outfilter

import (
	"sort"
	"strings"
)

// genericRule is gitleaks' catch-all rule for high-entropy assignments.
const genericRule = "generic-api-key"

// span is a part of a text to redact.
type span struct {
	start, end int
	rule       string
}

// withheldText replaces a text when the filter could not be built.
const withheldText = "[toolwarden: text withheld: the output filter's secret rules could not be compiled]"

// Text filters one text: strip, then find injection markers and secrets in
// what is left, redact the secrets, and make what a client would render
// against the reader inert (see neutralise).
func (f *Filter) Text(s string, rep *Report) string {
	if f.wait() != nil {
		return withheldText
	}
	s = f.strip(s, rep)
	return f.neutralise(redact(s, f.scan(s, 0, len(s), rep), 0, rep), rep)
}

// neutralise makes inert what a client would render against its reader:
// markdown images to outside hosts, and blank space that hides text.
func (f *Filter) neutralise(s string, rep *Report) string {
	return collapseBlank(defangImages(s, rep), rep)
}

// strip removes control sequences and characters, and invisible
// characters unless the options keep them, and warns of a word spelled
// in two look-alike scripts (see mixedScript).
func (f *Filter) strip(s string, rep *Report) string {
	s, invisible, controls := strip(s, f.opts.StripInvisible)
	rep.Stripped += invisible
	rep.Controls += controls
	if w := mixedScript(s); w != "" {
		rep.warn(w)
	}
	return s
}

// scan finds the markers and secrets in s. Secrets outside [lo, hi) are
// dropped and the others clipped to it: a JSON member is scanned as
// `"key": "value"` so that rules keyed on the name see it, but only the
// value may be changed.
func (f *Filter) scan(s string, lo, hi int, rep *Report) []span {
	windows, hits := f.prefilter(s, rep)
	defer f.release(windows, hits)
	var spans []span
	keep := func(sp span) {
		if sp.end > lo && sp.start < hi {
			spans = append(spans, span{max(sp.start, lo), min(sp.end, hi), sp.rule})
		}
	}
	for i, hs := range hits {
		r := &f.rules[i]
		last := 0 // the end of the rule's last match
		for _, h := range hs {
			if h.start < last {
				continue // inside it: the plain search goes on after a match, too
			}
			if !rep.spend() {
				return spans
			}
			if m := r.fast.match(s, h.start); m != nil {
				last = m[1]
				if sp, ok := f.finding(r, s, 0, m); ok {
					keep(sp)
				}
			}
		}
	}
	for i, ws := range windows {
		r := &f.rules[i]
		for _, w := range ws {
			if !rep.spend() {
				return spans
			}
			for _, m := range r.re.FindAllStringSubmatchIndex(s[w.start:w.end], -1) {
				if sp, ok := f.finding(r, s, w.start, m); ok {
					keep(sp)
				}
			}
		}
	}
	return spans
}

// prefilter walks s once for every keyword and marker (ASCII case-insensitive),
// records the markers as warnings and returns, per rule, the windows of s
// around its keywords' hits, merged, where its regular expression must run;
// for rules with a fast form, the hits themselves.
func (f *Filter) prefilter(s string, rep *Report) (windows, hits [][]span) {
	var from phraseFrom
	f.keys.walk(s, func(last int, pattern int32) {
		if p := int(pattern) - f.nKeys; f.verb(pattern) {
			if call := f.nearCall(s, last+1-f.keys.lens[pattern], last+1); call != "" {
				rep.warn(call)
			}
			return
		} else if a, ok := f.anchor(pattern); ok {
			if w, found := f.phraseAt(s, a, last+1-f.keys.lens[pattern], last+1, &from); w != "" {
				rep.finding(w, s, found.start, found.end)
			}
			return
		} else if p >= len(f.markers) {
			if call := toolCall(s, last+1-f.keys.lens[pattern], last+1); call != "" {
				rep.warn(call + " " + f.tools[p-len(f.markers)-len(f.anchors)])
			}
			return
		} else if p >= 0 {
			rep.finding(f.markers[p], s, last+1-f.keys.lens[pattern], last+1)
			return
		}
		if windows == nil { // most short results hold no keyword at all
			windows, hits = f.acquire()
		}
		at, end := last+1-f.keys.lens[pattern], last+1
		for _, ri := range f.hits[pattern] {
			if fast := f.rules[ri].fast; fast != nil {
				if fast.candidate(s, at, end) {
					hits[ri] = append(hits[ri], span{start: at, end: end})
				}
				continue
			}
			w := span{start: boundaryBefore(s, max(at-windowBefore, 0)), end: boundaryAfter(s, min(end+f.rules[ri].after, len(s)))}
			ws := windows[ri]
			// A window larger than maxWindow (a multi-line rule's) runs on
			// the NFA anyway, so overlapping ones are always merged: else
			// dense hits scan each byte once per hit (64 KiB of
			// "-----BEGIN " took ~25 s).
			if k := len(ws) - 1; k >= 0 && w.start <= ws[k].end && (w.end-ws[k].start <= maxWindow || w.end-w.start > maxWindow) {
				ws[k].end = max(ws[k].end, w.end)
				continue
			}
			windows[ri] = append(ws, w)
		}
	})
	return windows, hits
}

// spanSets is prefilter's per-rule spans, pooled: a JSON document is
// scanned one string at a time, and allocating them for each string that
// holds a keyword cost ~1.8 GB for a 1 MiB array of "api" strings.
type spanSets struct{ windows, hits [][]span }

func (f *Filter) acquire() ([][]span, [][]span) {
	if p, ok := f.spans.Get().(*spanSets); ok {
		return p.windows, p.hits
	}
	return make([][]span, len(f.rules)), make([][]span, len(f.rules))
}

// release empties windows and hits and pools them, unless they grew large.
func (f *Filter) release(windows, hits [][]span) {
	if windows == nil {
		return
	}
	for i := range windows {
		if cap(windows[i]) > 1024 || cap(hits[i]) > 1024 {
			return
		}
		windows[i], hits[i] = windows[i][:0], hits[i][:0]
	}
	f.spans.Put(&spanSets{windows, hits})
}

// finding checks one regex match (relative to off) the way gitleaks does:
// the secret's entropy, then the global and the rule's allowlists.
func (f *Filter) finding(r *secretRule, s string, off int, m []int) (span, bool) {
	start, end := r.secret(m)
	start, end = start+off, end+off
	if start >= end {
		return span{}, false
	}
	secret := s[start:end]
	if r.entropy > 0 && shannonEntropy(secret) <= r.entropy {
		return span{}, false
	}
	match := strings.Trim(s[m[0]+off:m[1]+off], "\n")
	line := lineAround(s, start, end)
	if allowed(f.global, secret, match, line) || allowed(r.allow, secret, match, line) {
		return span{}, false
	}
	return span{start, end, r.id}, true
}

// redact replaces spans (offsets shifted by base) in s and counts them.
// Overlapping spans are redacted as one, named after the most specific
// rule: a service's own rule wins over the generic one.
func redact(s string, spans []span, base int, rep *Report) string {
	if len(spans) == 0 {
		return s
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].start != spans[j].start {
			return spans[i].start < spans[j].start
		}
		return spans[i].end > spans[j].end
	})
	var b strings.Builder
	b.Grow(len(s))
	pos := 0
	for i := 0; i < len(spans); {
		sp := spans[i]
		for i++; i < len(spans) && spans[i].start < sp.end; i++ {
			sp.end = max(sp.end, spans[i].end)
			if sp.rule == genericRule {
				sp.rule = spans[i].rule
			}
		}
		b.WriteString(s[pos : sp.start-base])
		b.WriteString(Redaction(sp.rule))
		rep.redacted(sp.rule)
		pos = sp.end - base
	}
	b.WriteString(s[pos:])
	return b.String()
}

// separator reports whether c may sit next to a token: a window edge is
// moved onto one so that no match starts or ends at an arbitrary cut.
func separator(c byte) bool { return separatorBytes[c] }

var separatorBytes = byteSet(" \t\r\n\"'`,;:=(){}[]<>\\")

const maxBoundarySlide = 256

// maxWindow bounds how far windows are merged. Go's regexp runs a
// backtracker, many times faster than its NFA, on inputs this small, and
// gitleaks' generic rule costs about 1 µs a byte on the NFA. Windows that
// are not merged overlap, so no match is cut; one found twice is
// redacted once.
const maxWindow = 2048

func boundaryBefore(s string, i int) int {
	for j := i; j > 0 && i-j < maxBoundarySlide; j-- {
		if separator(s[j-1]) {
			return j
		}
	}
	return i
}

func boundaryAfter(s string, i int) int {
	for j := i; j < len(s) && j-i < maxBoundarySlide; j++ {
		if separator(s[j]) {
			return j
		}
	}
	return i
}

// lineAround returns the line holding s[start:end], at most 1 KiB either side.
func lineAround(s string, start, end int) string {
	lo := max(start-1024, 0)
	if i := strings.LastIndexByte(s[lo:start], '\n'); i >= 0 {
		lo += i + 1
	}
	hi := min(end+1024, len(s))
	if i := strings.IndexByte(s[end:hi], '\n'); i >= 0 {
		hi = end + i
	}
	return s[lo:hi]
}
