package tools

import "strings"

// Effects say what a tool does to the world: for reasoning
// about a policy, and the one place MCP annotations are checked against.
type Effects struct {
	// Pure: no I/O at all (no capabilities), and idempotent.
	Pure       bool
	Idempotent bool
	// ReadsNet: it connects to the network (a net: capability).
	ReadsNet bool
	// ReadsFS and WritesFS: it reads or writes workspace files.
	ReadsFS, WritesFS bool
	// WritesOther: it changes something else: a graph, a store, or runs
	// a program.
	WritesOther bool
}

// EffectsOf derives a tool's effects from the capabilities it declares,
// and its idempotence from its annotation (which no capability states).
func EffectsOf(t Tool) Effects {
	e := Effects{Idempotent: t.Tool.Annotations.IdempotentHint != nil && *t.Tool.Annotations.IdempotentHint}
	for _, c := range t.Meta.Capabilities {
		resource, rest, _ := strings.Cut(c, ":")
		verb, _, _ := strings.Cut(rest, ":")
		switch {
		case resource == "net":
			e.ReadsNet = true
		case resource == "fs" && verb == "read":
			e.ReadsFS = true
		case resource == "fs":
			e.ReadsFS, e.WritesFS = true, true
		case verb != "read":
			e.WritesOther = true
		}
	}
	e.Pure = len(t.Meta.Capabilities) == 0 && e.Idempotent
	return e
}

// Hints are the MCP annotations effects determine: readOnlyHint (it
// writes nothing), idempotentHint, openWorldHint (it reaches the
// network). destructiveHint is the tool's own statement: effects say a
// tool writes, not whether it overwrites or only adds.
func (e Effects) Hints() (readOnly, idempotent, openWorld bool) {
	return !e.WritesFS && !e.WritesOther, e.Idempotent, e.ReadsNet
}
