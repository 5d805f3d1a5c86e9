package outfilter

import "sync"

// keywordDFA finds every occurrence of a set of patterns (gitleaks'
// keywords and the injection markers), ASCII case-insensitively, in one
// pass: an Aho-Corasick automaton compiled to a full transition table over
// byte classes. It replaces gitleaks' own trie (github.com/BobuSumisu/aho-corasick),
// which follows failure links at run time and needs a lower-cased copy of
// the text; this one does one table lookup per byte and folds case (and
// white space: a space in a pattern matches any run of spaces, tabs and
// line breaks) in the class table, which halves the filter's time on 1 MiB (see
// BenchmarkText1MiB). TestKeywordDFAMatchesTrie checks it against that trie.
type keywordDFA struct {
	class  [256]uint8 // byte -> class; upper-case ASCII shares its lower-case class
	nclass int
	// next[state*nclass+class] is the next state, premultiplied by nclass,
	// and negated when patterns end there (the root, 0, never ends one).
	next  []int32
	out   [][]int32 // patterns ending at each state, suffixes included
	lens  []int     // pattern lengths
	depth int       // the longest pattern's length
}

// newKeywordDFA compiles patterns, which must be non-empty; upper-case
// ASCII in them matches either case.
func newKeywordDFA(patterns []string) *keywordDFA {
	d := &keywordDFA{nclass: 1} // class 0: bytes in no pattern
	for _, p := range patterns {
		d.lens, d.depth = append(d.lens, len(p)), max(d.depth, len(p))
		for i := range len(p) {
			if c := lowerASCII(p[i]); d.class[c] == 0 {
				d.class[c] = uint8(d.nclass)
				d.nclass++
			}
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		d.class[c] = d.class[c+'a'-'A']
	}
	// A space in a pattern matches any ASCII white space, so a marker
	// broken over lines is still found.
	for _, c := range []byte("\t\n\v\f\r") {
		d.class[c] = d.class[' ']
	}
	goTo := d.trie(patterns)
	d.link(goTo)
	d.premultiply()
	return d
}

// trie builds the goto function (-1: no edge) and the patterns ending at
// each node.
func (d *keywordDFA) trie(patterns []string) [][]int32 {
	goTo := [][]int32{d.row()}
	d.out = [][]int32{nil}
	for pi, p := range patterns {
		s := 0
		for i := range len(p) {
			c := d.class[p[i]]
			if goTo[s][c] < 0 {
				goTo[s][c] = int32(len(goTo))
				goTo = append(goTo, d.row())
				d.out = append(d.out, nil)
			}
			s = int(goTo[s][c])
		}
		d.out[s] = append(d.out[s], int32(pi))
	}
	return goTo
}

func (d *keywordDFA) row() []int32 {
	r := make([]int32, d.nclass)
	for i := range r {
		r[i] = -1
	}
	return r
}

// link fills the transition table breadth first: a missing edge goes
// where the failure state's edge goes, and each state inherits the
// patterns of its failure state.
func (d *keywordDFA) link(goTo [][]int32) {
	n := d.nclass
	d.next = make([]int32, len(goTo)*n)
	fail := make([]int32, len(goTo))
	queue := make([]int32, 0, len(goTo))
	for c := range n {
		if t := goTo[0][c]; t > 0 {
			d.next[c] = t
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for c := range n {
			if t := goTo[s][c]; t >= 0 {
				fail[t] = d.next[int(fail[s])*n+c]
				d.out[t] = append(d.out[t], d.out[fail[t]]...)
				d.next[int(s)*n+c] = t
				queue = append(queue, t)
			} else {
				d.next[int(s)*n+c] = d.next[int(fail[s])*n+c]
			}
		}
	}
}

// walk calls fn for every occurrence, in order, with the index of its
// last byte. A run of white space counts as one space, so "ignore
// previous" matches "ignore  previous"; patterns without white space
// (gitleaks' keywords) are unaffected, and their start is their end minus
// their length. A long string is walked in four lanes (see lanes).
func (d *keywordDFA) walk(s string, fn func(end int, pattern int32)) {
	if m, b, ok := d.laneStarts(s); ok {
		d.lanes(s, m, b, fn)
		return
	}
	d.walkFrom(s, 0, 0, fn)
}

// walkFrom walks s[from:] from state, calling fn for every occurrence,
// and returns the state it ends in.
func (d *keywordDFA) walkFrom(s string, from int, state int32, fn func(end int, pattern int32)) int32 {
	return d.walkSpan(s, from, from, len(s), state, fn)
}

// walkSpan walks s[i:to] from state, calling fn for every occurrence that
// ends at report or after, and returns the state it ends in.
func (d *keywordDFA) walkSpan(s string, i, report, to int, state int32, fn func(end int, pattern int32)) int32 {
	n := int32(d.nclass)
	for ; i < to; i++ {
		if state = d.next[state+int32(d.class[s[i]])]; state < 0 {
			if state = -state; i >= report {
				for _, p := range d.out[state/n] {
					fn(i, p)
				}
			}
		}
	}
	return state
}

// laneStarts is where the three later lanes of s begin to report (m,
// see quarters) and where each starts (b, see laneStart); ok is false
// when s is too short for lanes or has no such starts.
func (d *keywordDFA) laneStarts(s string) (m, b [3]int, ok bool) {
	if !d.laned(len(s)) {
		return m, b, false
	}
	m[0], m[1], m[2] = quarters(len(s), d.depth)
	for k := range m {
		if b[k] = d.laneStart(s, m[k]); b[k] == 0 {
			return m, b, false
		}
	}
	return m, b, true
}

// laneStart is where a walk started at the root is, by m, in the state
// of a walk from the start of s: d.depth symbols before m, a run of white
// space counting as one (the automaton's state depends only on the last
// d.depth symbols). It is 0 when s has no such place.
func (d *keywordDFA) laneStart(s string, m int) int {
	space := d.class[' ']
	i := m
	for symbols := 0; i > 0 && symbols < d.depth; {
		i--
		if d.class[s[i]] != space || i == 0 || d.class[s[i-1]] != space {
			symbols++
		}
	}
	return i
}

// laneHit is an occurrence a later lane found, reported after the
// earlier lanes'.
type laneHit struct{ end, pattern int32 }

// laneHitLists are the occurrences the three later lanes found.
type laneHitLists [3][]laneHit

var laneHits = sync.Pool{New: func() any { return new(laneHitLists) }}

// lanes is walk in four lanes side by side: the first over s[:m[0]] from
// the root, lane k (1 to 3) from the root at b[k-1] to m[k] (the last to
// the end), reporting only what ends at m[k-1] or after. A walk waits on
// each step's table lookup for the next, and a call's lookups mostly miss
// the cache, so four run in about the time of one. The later lanes'
// occurrences are kept and reported after the first lane's, lane by lane,
// so in order.
func (d *keywordDFA) lanes(s string, m, b [3]int, fn func(end int, pattern int32)) {
	n := int32(d.nclass)
	later := laneHits.Get().(*laneHitLists)
	// Each later lane is at least as long as the first (see quarters;
	// laneStart is at least d.depth bytes before its m): the first ends
	// with the loop, the others go on alone to their ends.
	ends := [3]int{m[1], m[2], len(s)}
	a, p1, p2, p3 := 0, b[0], b[1], b[2]
	var sa, s1, s2, s3 int32
	for ; a < m[0]; a, p1, p2, p3 = a+1, p1+1, p2+1, p3+1 {
		sa = d.next[sa+int32(d.class[s[a]])]
		s1 = d.next[s1+int32(d.class[s[p1]])]
		s2 = d.next[s2+int32(d.class[s[p2]])]
		s3 = d.next[s3+int32(d.class[s[p3]])]
		if sa|s1|s2|s3 >= 0 {
			continue
		}
		if sa < 0 {
			sa = -sa
			for _, p := range d.out[sa/n] {
				fn(a, p)
			}
		}
		if s1 < 0 {
			if s1 = -s1; p1 >= m[0] {
				for _, p := range d.out[s1/n] {
					later[0] = append(later[0], laneHit{int32(p1), p})
				}
			}
		}
		if s2 < 0 {
			if s2 = -s2; p2 >= m[1] {
				for _, p := range d.out[s2/n] {
					later[1] = append(later[1], laneHit{int32(p2), p})
				}
			}
		}
		if s3 < 0 {
			if s3 = -s3; p3 >= m[2] {
				for _, p := range d.out[s3/n] {
					later[2] = append(later[2], laneHit{int32(p3), p})
				}
			}
		}
	}
	keep := func(k int) func(end int, pattern int32) {
		return func(end int, p int32) { later[k] = append(later[k], laneHit{int32(end), p}) }
	}
	d.walkSpan(s, p1, m[0], ends[0], s1, keep(0))
	d.walkSpan(s, p2, m[1], ends[1], s2, keep(1))
	for k := range later {
		for _, h := range later[k] {
			fn(int(h.end), h.pattern)
		}
	}
	d.walkSpan(s, p3, m[2], ends[2], s3, fn)
	for k := range later {
		if cap(later[k]) > 1<<16 {
			later[k] = nil
		}
		later[k] = later[k][:0]
	}
	laneHits.Put(later)
}

// premultiply turns the table into the one walk runs: every state a white
// space edge enters gets a twin, entered by white space instead, whose
// white space edges stay put and report nothing (a run of white space is
// one space; the walk needs no test of its own for it); and state numbers
// become offsets, negated on the edges that report patterns (the root, 0,
// never ends one). Only a few states are entered by white space (the root
// and those inside the markers' phrases), so the table stays about the
// size of the automaton's, where a twin for every state doubled it (623
// KB against a 512 KB L2 cache).
func (d *keywordDFA) premultiply() {
	n, space := d.nclass, int(d.class[' '])
	states := len(d.next) / n
	// twin[t] is the number of t's twin, for the states white space enters.
	twin := make([]int, states)
	total := states
	if space != 0 {
		for q := range states {
			if t := int(d.next[q*n+space]); twin[t] == 0 {
				twin[t] = total
				total++
			}
		}
	}
	next, out := make([]int32, total*n), make([][]int32, total)
	edge := func(to int, report bool) int32 {
		if report && len(out[to]) > 0 {
			return -int32(to * n)
		}
		return int32(to * n)
	}
	copy(out, d.out)
	for t, id := range twin {
		if id != 0 {
			out[id] = d.out[t]
		}
	}
	row := func(id, q int, afterSpace bool) {
		for c := range n {
			t := int(d.next[q*n+c])
			switch {
			case space == 0 || c != space:
				next[id*n+c] = edge(t, true)
			case !afterSpace:
				next[id*n+c] = edge(twin[t], true)
			default:
				next[id*n+c] = edge(id, false)
			}
		}
	}
	for q := range states {
		row(q, q, false)
		if twin[q] != 0 {
			row(twin[q], q, true)
		}
	}
	d.next, d.out = next, out
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
