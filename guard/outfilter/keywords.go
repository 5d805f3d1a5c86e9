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
// their length. A long string is walked in two lanes (see lanes).
func (d *keywordDFA) walk(s string, fn func(end int, pattern int32)) {
	if len(s) >= max(twoLanes, 4*d.depth) {
		if m := len(s) / 2; d.laneStart(s, m) > 0 {
			d.lanes(s, m, d.laneStart(s, m), fn)
			return
		}
	}
	d.walkFrom(s, 0, 0, fn)
}

// walkFrom walks s[from:] from state, calling fn for every occurrence,
// and returns the state it ends in.
func (d *keywordDFA) walkFrom(s string, from int, state int32, fn func(end int, pattern int32)) int32 {
	n := int32(d.nclass)
	for i := from; i < len(s); i++ {
		if state = d.next[state+int32(d.class[s[i]])]; state < 0 {
			state = -state
			for _, p := range d.out[state/n] {
				fn(i, p)
			}
		}
	}
	return state
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

// laneHit is an occurrence the second lane found, reported after the
// first lane's.
type laneHit struct{ end, pattern int32 }

var laneHits = sync.Pool{New: func() any { return new([]laneHit) }}

// lanes is walk in two lanes side by side: one over s[:m] from the root,
// the other from the root at b, laneStart(s, m), to the end, reporting
// only what ends at m or after. A walk waits on each step's table lookup for
// the next, so two run in about the time of one. The second lane's
// occurrences are kept and reported after the first lane's, in order.
func (d *keywordDFA) lanes(s string, m, b int, fn func(end int, pattern int32)) {
	n := int32(d.nclass)
	later := laneHits.Get().(*[]laneHit)
	a, sa, sb := 0, int32(0), int32(0)
	for ; a < m; a, b = a+1, b+1 {
		sa = d.next[sa+int32(d.class[s[a]])]
		sb = d.next[sb+int32(d.class[s[b]])]
		if sa < 0 {
			sa = -sa
			for _, p := range d.out[sa/n] {
				fn(a, p)
			}
		}
		if sb < 0 {
			if sb = -sb; b >= m {
				for _, p := range d.out[sb/n] {
					*later = append(*later, laneHit{int32(b), p})
				}
			}
		}
	}
	for _, h := range *later {
		fn(int(h.end), h.pattern)
	}
	d.walkFrom(s, b, sb, fn)
	if cap(*later) <= 1<<16 {
		*later = (*later)[:0]
		laneHits.Put(later)
	}
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
