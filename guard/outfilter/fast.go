package outfilter

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
)

// anchored is a faster equivalent of a rule whose every match has a keyword
// at a known place, so the rule can run anchored at each keyword hit
// instead of searching windows. It matters for gitleaks' generic-api-key:
// its keywords (key, api, auth, token, password, ...) are everywhere in
// ordinary text, so windows cover nearly all of it, and its leading
// [\w.-]{0,50}? makes Go's NFA cost about 1 µs a byte: 1 MiB took ~1 s.
// Anchored, a hit costs a few µs and the match ends within ~200 bytes.
//
// A form is chosen only when the rule's expression still has the exact
// shape below; after a gitleaks upgrade that changes it, the rule falls
// back to the windowed search (correct, slower), and TestFastPathsInUse
// fails so that someone looks.
type anchored struct {
	re *regexp.Regexp // the rule's expression, anchored at the keyword
	// lead is how many [\w.-] bytes before the keyword the match may
	// start with (the generic rule's lazy prefix).
	lead int
	// boundary: the expression began with \b, which anchoring drops, so
	// the byte before the keyword must not be a word byte.
	boundary bool
	// assignment: the expression requires an assignment operator after
	// the keyword; hits without one are skipped before any regexp runs.
	assignment bool
	// unbounded: a match may need more than shortSpan bytes before it can
	// end (the JWT's segments have no maximum: an x5c header is KiBs), so
	// a miss in the short span is tried again on the long one.
	unbounded bool
	// long: a match may outlast the short span and the expression has
	// lesser matches that end sooner (curl's `.*?` over lines), which a
	// short span would pick instead: it runs on the long span at once.
	long bool
}

const (
	genericPrefix = `(?i)[\w.-]{0,50}?`
	jwtPrefix     = `\b(ey`
	// fastSpan caps the text an anchored expression may look at after its
	// keyword; the expression stops early, as soon as no match is possible.
	fastSpan  = 64 << 10
	shortSpan = 200
)

// anchoredForm returns the fast form of a rule, or nil.
func anchoredForm(id, expr string, keywords []string) *anchored {
	switch {
	case id == genericRule && strings.HasPrefix(expr, genericPrefix) &&
		strings.Contains(expr, `(?:access|auth|(?-i:[Aa]pi|API)|credential|creds|key|passw(?:or)?d|secret|token)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`):
		return &anchored{re: regexp.MustCompile(`(?i)^(?:` + strings.TrimPrefix(expr, genericPrefix) + `)`), lead: 50, assignment: true}
	case id == "jwt" && strings.HasPrefix(expr, jwtPrefix):
		return &anchored{re: regexp.MustCompile(`^(?:` + strings.TrimPrefix(expr, `\b`) + `)`), boundary: true, unbounded: true}
	}
	if a := literalForm(expr, keywords); a != nil {
		return a
	}
	return semiGenericForm(expr, keywords)
}

// semiGenericForm is the anchored form of a rule gitleaks builds with
// GenerateSemiGenericRegex: one or two lazy [\w.-]{0,50}? prefixes, then
// the service's names (jfrog|artifactory|bintray|xray), an assignment
// and the secret. Like the generic rule's, such an expression costs Go's
// NFA about 0.5 µs a byte of window (a 772-byte window ~370 µs), and
// random base64 meets a four-letter name in about one read in ten; every
// match's names part begins at a keyword hit, so the rest of the
// expression runs anchored there and the match start goes back over the
// [\w.-] bytes the prefixes may take. A rule whose names do not begin
// with its keywords (lob's keywords are in its secret) keeps the windows.
func semiGenericForm(expr string, keywords []string) *anchored {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil || re.Op != syntax.OpConcat {
		return nil // a top-level alternation: a branch may lack the prefix
	}
	lead, subs := 0, re.Sub
	for len(subs) > 1 && namePrefix(subs[0]) {
		lead, subs = lead+subs[0].Max, subs[1:]
	}
	rest := &syntax.Regexp{Op: syntax.OpConcat, Sub: subs}
	if lead == 0 || !startsWithKeyword(rest, keywords) {
		return nil
	}
	n, bounded := maxLen(rest)
	return &anchored{re: regexp.MustCompile(`^(?:` + rest.String() + `)`), lead: lead, unbounded: !bounded || n+1 >= shortSpan}
}

// namePrefix reports whether re is [\w.-]{0,50}?, case-folded or not.
func namePrefix(re *syntax.Regexp) bool {
	return re.Op == syntax.OpRepeat && re.Min == 0 && re.Max == 50 && re.Flags&syntax.NonGreedy != 0 &&
		re.Sub[0].Op == syntax.OpCharClass && (slices.Equal(re.Sub[0].Rune, nameClass) || slices.Equal(re.Sub[0].Rune, nameClassFolded))
}

// The rune ranges of [\w.-] and (?i)[\w.-] (which adds ſ and the Kelvin sign).
var nameClass, nameClassFolded = classOf(`[\w.-]`), classOf(`(?i)[\w.-]`)

func classOf(expr string) []rune {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil || re.Op != syntax.OpCharClass {
		panic("outfilter: not a character class: " + expr)
	}
	return re.Rune
}

// literalForm is the anchored form of a rule whose every match begins with
// one of its keywords: its expression, after an optional leading \b, is
// literal text, or a group or alternation of branches that each begin
// with literal text, and each of those texts starts with a keyword (AWS's
// `\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})\b`, Vault's
// `\b((?:hvs\.[\w-]{90,120}|s\.(?i:[a-z0-9]{24})))...`). The windowed search
// of such a rule can only match where the automaton reported a keyword,
// so the expression runs anchored there instead: Vault's keyword "s." is
// in every other line of Go code, and its windows cost ~75 µs per 4 KiB.
// A match may begin at one keyword and swallow the next (flyio's
// {100,}, curl's `.*?` over lines): scan skips the hits inside a rule's
// last match, as the plain search goes on after it; a rule whose matches
// may outlast shortSpan runs on the long span (see long)
// (TestAnchoredFormsFindWhatPlainSearchFinds). Flyio's windows cost ~18
// µs a read in a file of random base64 that holds "fm1".
func literalForm(expr string, keywords []string) *anchored {
	body, boundary := strings.CutPrefix(expr, `\b`)
	re, err := syntax.Parse(body, syntax.Perl)
	if err != nil || !startsWithKeyword(re, keywords) {
		return nil
	}
	n, bounded := maxLen(re)
	return &anchored{re: regexp.MustCompile(`^(?:` + body + `)`), boundary: boundary, long: !bounded || n+1 >= shortSpan}
}

// startsWithKeyword reports whether every match of re begins with literal
// text that starts with one of keywords (lower-case; compared ASCII
// case-insensitively, as the automaton finds them).
func startsWithKeyword(re *syntax.Regexp, keywords []string) bool {
	starts, _ := literalStarts(re)
	for _, lit := range starts {
		if !slices.ContainsFunc(keywords, func(k string) bool { return k != "" && strings.HasPrefix(strings.ToLower(lit), k) }) {
			return false
		}
	}
	return len(starts) > 0
}

// maxStarts bounds the texts literalStarts collects, maxClass the
// characters of a class it spells out.
const (
	maxStarts = 64
	maxClass  = 4
)

// literalStarts returns texts one of which every match of re begins with
// (none when some match may begin otherwise), and whether they are the
// whole matches: parsing factors alternations, so AWS's reads
// A(?:3T[A-Z0-9]|KIA|SIA|BIA|CCA)..., whose starts are A3T, AKIA, ...
func literalStarts(re *syntax.Regexp) (starts []string, whole bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{string(re.Rune)}, true
	case syntax.OpCapture:
		return literalStarts(re.Sub[0])
	case syntax.OpCharClass: // a small class: [Ss], [_-]
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if len(starts) == maxClass {
					return nil, false
				}
				starts = append(starts, string(r))
			}
		}
		return starts, true
	case syntax.OpQuest: // linked[_-]?in
		if starts, whole = literalStarts(re.Sub[0]); len(starts) == 0 {
			return nil, false
		}
		return append(starts, ""), whole
	case syntax.OpAlternate:
		whole = true
		for _, sub := range re.Sub {
			s, w := literalStarts(sub)
			if len(s) == 0 || len(starts)+len(s) > maxStarts {
				return nil, false
			}
			starts, whole = append(starts, s...), whole && w
		}
		return starts, whole
	case syntax.OpConcat:
		starts, whole = []string{""}, true
		for _, sub := range re.Sub {
			next, w := literalStarts(sub)
			if len(next) == 0 || len(starts)*len(next) > maxStarts {
				return nonEmpty(starts), false
			}
			var joined []string
			for _, a := range starts {
				for _, b := range next {
					joined = append(joined, a+b)
				}
			}
			if starts = joined; !w {
				return nonEmpty(starts), false
			}
		}
		return nonEmpty(starts), true
	}
	return nil, false
}

// nonEmpty is starts, or none if one of them is empty (a match may begin
// with anything).
func nonEmpty(starts []string) []string {
	if slices.Contains(starts, "") {
		return nil
	}
	return starts
}

// maxLen is the most bytes a match of re can span, if bounded.
func maxLen(re *syntax.Regexp) (int, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0, true
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 { // (?i)s also matches ſ, k also K
			return len(re.Rune) * utf8.UTFMax, true
		}
		return len(string(re.Rune)), true
	case syntax.OpCharClass:
		n := 0
		for i := 1; i < len(re.Rune); i += 2 {
			n = max(n, utf8.RuneLen(re.Rune[i]))
		}
		return n, true
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax, true
	case syntax.OpCapture:
		return maxLen(re.Sub[0])
	case syntax.OpQuest:
		return maxLen(re.Sub[0])
	case syntax.OpRepeat:
		n, ok := maxLen(re.Sub[0])
		return n * re.Max, ok && re.Max >= 0
	case syntax.OpConcat, syntax.OpAlternate:
		total := 0
		for _, sub := range re.Sub {
			n, ok := maxLen(sub)
			if !ok {
				return 0, false
			}
			if re.Op == syntax.OpConcat {
				total += n
			} else {
				total = max(total, n)
			}
		}
		return total, true
	}
	return 0, false // star, plus, anything unknown
}

// candidate reports whether the keyword hit [at, end) of s passes the
// form's cheap necessary conditions.
func (a *anchored) candidate(s string, at, end int) bool {
	if a.boundary && at > 0 && wordByte(s[at-1]) {
		return false
	}
	return !a.assignment || assignmentFollows(s, end)
}

// match runs the anchored form at a candidate keyword starting at at and
// returns the match in FindSubmatchIndex form, offsets relative to s.
func (a *anchored) match(s string, at int) []int {
	// Go's regexp backtracks, several times faster than its NFA, on input
	// this short (the generic rule's program has ~450 instructions); only a
	// match that runs to the cut, or an unbounded form's miss, is tried
	// again on the long span (anchored, the NFA stops where no match can
	// continue, so a miss costs about the candidate's length); a long
	// form runs on the long span at once.
	cut := min(at+shortSpan, len(s))
	if a.long {
		cut = min(at+fastSpan, len(s))
	}
	m := a.re.FindStringSubmatchIndex(s[at:cut])
	if (m == nil && a.unbounded || m != nil && at+m[1] >= cut) && cut < len(s) {
		m = a.re.FindStringSubmatchIndex(s[at:min(at+fastSpan, len(s))])
	}
	if m == nil {
		return nil
	}
	for i := range m {
		if m[i] >= 0 {
			m[i] += at
		}
	}
	for n := 0; n < a.lead && m[0] > 0 && (wordByte(s[m[0]-1]) || s[m[0]-1] == '.' || s[m[0]-1] == '-'); n++ { // [\w.-]
		m[0]--
	}
	return m
}

// assignmentFollows is a necessary condition of the generic rule at a
// keyword ending at end: up to 20 of [ \t\w.-] (64 here, to be loose), up
// to 3 of [\s'"], then the first byte of an operator (=, >, :, ||, =>, ?=, ,).
func assignmentFollows(s string, end int) bool {
	i := end
	for n := 0; i < len(s) && n < 64 && nameBytes[s[i]]; n++ {
		i++
	}
	for n := 0; i < len(s) && n < 3 && quoteSpaceBytes[s[i]]; n++ {
		i++
	}
	return i < len(s) && operatorBytes[s[i]] && valueFollows(s, i)
}

// valueFollows is the rest of that condition, at the operator's first
// byte op: the value, 10 or more of [\w.=+/-], starts at most 8 bytes later
// (up to 3 operator bytes, then up to 5 of [`'"\s=]).
func valueFollows(s string, op int) bool {
	run := 0
	for j := op + 1; j < len(s) && j < op+9+10; j++ {
		if !valueBytes[s[j]] {
			run = 0
			continue
		}
		if run++; run >= 10 {
			return true
		}
	}
	return false
}

// Byte classes of the generic rule, as lookup tables.
var (
	nameBytes       = byteSet(words + " \t.-")
	quoteSpaceBytes = byteSet(" \t\n\r\f\v'\"")
	operatorBytes   = byteSet("=>:|?,")
	valueBytes      = byteSet(words + ".=+/-")
	wordBytes       = byteSet(words)
)

const words = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"

func byteSet(chars string) *[256]bool {
	var t [256]bool
	for i := range len(chars) {
		t[chars[i]] = true
	}
	return &t
}

func wordByte(c byte) bool { return wordBytes[c] }
