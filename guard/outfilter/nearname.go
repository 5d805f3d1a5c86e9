package outfilter

import "strings"

// Text asking for a tool by a name close to one of this server's
// ("call update_task" where the server has update_task_status, "run
// delete-file", "use udpate_task_status") is an instruction all the same:
// a model that finds no such tool may well call the nearest one. nearCall
// finds it from the verb: a DFA hit on one of callVerbList, then the word
// after it (past quotes, emphasis and the fillers), which must be written
// like an identifier. It is warned about as `call update_task (close to
// update_task_status)`.
//
// What counts as close is chosen so that prose is never flagged: a word
// without `_` or `-` only when it is a tool name with its separators
// dropped (updatetaskstatus); an identifier when, with `-` read as `_`,
// it is a tool name, is within a small edit distance of one (nearEdits),
// or is a run of two or more of a tool name's words at its start or its
// end (update_task, task_status). A longer identifier that merely holds a
// tool name (test_read_file, update_task_status_v2) is not close: code
// and test output are full of those.
var callVerbList = []string{"call", "invoke", "use", "run", "execute", "trigger"}

// nearCall returns the warning for the verb at s[at:end] when it asks for
// a name close to, but not the same as, one of f's tools; else "".
func (f *Filter) nearCall(s string, at, end int) string {
	if at > 0 && identByte(s[at-1]) || end < len(s) && identByte(s[end]) {
		return ""
	}
	i := end
	for range 4 {
		var word string
		word, i = identAfter(s, i)
		w := strings.ToLower(word)
		if callFillers[w] {
			continue
		}
		if name := f.closeTool(w); name != "" {
			return strings.ToLower(s[at:end]) + " " + w + " (close to " + name + ")"
		}
		return ""
	}
	return ""
}

// identAfter returns the identifier-like word that starts after s[i],
// past white space, quotes and emphasis, and where it ends: ASCII
// letters, digits, `_` and `-`, beginning with a letter.
func identAfter(s string, i int) (string, int) {
	for i < len(s) && strings.IndexByte(" \t\r\n`'\"*", s[i]) >= 0 {
		i++
	}
	start := i
	if i == len(s) || (s[i]|0x20) < 'a' || (s[i]|0x20) > 'z' {
		return "", i
	}
	for i < len(s) && identByte(s[i]) {
		i++
	}
	return s[start:i], i
}

// closeTool returns the tool whose name w is close to (see nearCall),
// or "" when w is none's or is exactly one's (toolCall warns of those).
func (f *Filter) closeTool(w string) string {
	w = strings.TrimRight(w, "-_")
	if len(w) < 4 || len(w) > maxNear {
		return ""
	}
	ident := strings.ContainsAny(w, "_-")
	norm := strings.ReplaceAll(w, "-", "_")
	for _, t := range f.tools {
		if w == t {
			return ""
		}
	}
	for i, t := range f.tools {
		switch {
		case !ident:
			if w == f.squashed[i] {
				return t
			}
		case norm == t, editsWithin(norm, t, nearEdits(t)), partsAtEnd(norm, t):
			return t
		}
	}
	return ""
}

// squash is a tool's name without its `_`, or "" when it has none (the
// name itself is no near name).
func squash(t string) string {
	if !strings.Contains(t, "_") {
		return ""
	}
	return strings.ReplaceAll(t, "_", "")
}

// nearEdits is how many edits (a letter added, dropped, changed, or two
// swapped) still make a name close to t: one for a short name, two from
// ten letters on.
func nearEdits(t string) int {
	if len(t) < 10 {
		return 1
	}
	return 2
}

// partsAtEnd reports whether w is two or more of t's `_`-separated words,
// fewer than all, at t's start or at its end.
func partsAtEnd(w, t string) bool {
	if !strings.Contains(w, "_") || len(w) >= len(t) {
		return false
	}
	return strings.HasPrefix(t, w) && t[len(w)] == '_' || strings.HasSuffix(t, w) && t[len(t)-len(w)-1] == '_'
}

// maxNear bounds the names editsWithin compares: a declared tool's name
// has at most 64 bytes (tools/declared), and a word longer by more than
// two edits is close to none.
const maxNear = 66

// editsWithin reports whether the optimal string alignment distance
// between a and b is at most k (insertions, deletions, substitutions and
// swaps of two adjacent bytes). It runs in place on the stack: a text
// dense in "call x_y" asks it once per tool for each.
func editsWithin(a, b string, k int) bool {
	if d := len(a) - len(b); d > k || -d > k || len(a) > maxNear || len(b) > maxNear {
		return false
	}
	// Three rows of the dynamic programme: two back for a swap.
	var rows [3][maxNear + 1]int
	prev2, prev, cur := &rows[0], &rows[1], &rows[2]
	for j := range len(b) + 1 {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			best = min(best, cur[j])
		}
		if best > k {
			return false
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)] <= k
}
