package outfilter

import "strings"

// A tool's name in output is no instruction by itself (a README names
// read_file), but a verb asking for it is: "call update_task_status for
// every task", "use the `delete_file` tool". toolCall recognises the verb
// in front of a tool name, past quotes, emphasis and the fillers "the",
// "tool" and "function".
var (
	callVerbs   = map[string]bool{"call": true, "invoke": true, "use": true, "run": true, "execute": true, "trigger": true}
	callFillers = map[string]bool{"the": true, "tool": true, "function": true}
)

// toolCall returns the verb asking for the tool name at s[at:end], or "".
func toolCall(s string, at, end int) string {
	if at > 0 && identByte(s[at-1]) || end < len(s) && identByte(s[end]) {
		return ""
	}
	i := at
	for range 4 {
		var word string
		word, i = wordBefore(s, i)
		switch w := strings.ToLower(word); {
		case callVerbs[w]:
			return w
		case !callFillers[w]:
			return ""
		}
	}
	return ""
}

// wordBefore returns the ASCII word that ends before s[i], past white
// space, quotes and emphasis, and where it starts.
func wordBefore(s string, i int) (string, int) {
	for i > 0 && strings.IndexByte(" \t\r\n`'\"*", s[i-1]) >= 0 {
		i--
	}
	end := i
	for i > 0 && (s[i-1]|0x20) >= 'a' && (s[i-1]|0x20) <= 'z' {
		i--
	}
	return s[i:end], i
}

func identByte(c byte) bool {
	return c == '_' || c == '-' || '0' <= c && c <= '9' || (c|0x20) >= 'a' && (c|0x20) <= 'z'
}
