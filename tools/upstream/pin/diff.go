package pin

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/go-json-experiment/json/jsontext"
)

// Kind is what became of a pinned tool.
type Kind string

// The kinds of Change.
const (
	Changed Kind = "changed"
	Added   Kind = "added"
	Removed Kind = "removed"
)

// Field is one field of a definition that differs: a member of the tool
// object ("description", "inputSchema") or "server.name",
// "server.version". Old or New is nil where the field is absent.
type Field struct {
	Name     string
	Old, New jsontext.Value
}

// Change is one tool (or prompt) whose listing differs from its pin.
type Change struct {
	// Tool is the tool's or prompt's own name.
	Tool string
	// Prompt is set for a prompt's change.
	Prompt    bool
	Kind      Kind
	Fields    []Field
	OldDigest string
	NewDigest string
}

// FieldNames lists the changed fields' names, or the kind of change for
// an added or removed tool.
func (c Change) FieldNames() string {
	if c.Kind != Changed {
		return c.What() + " " + string(c.Kind)
	}
	names := make([]string, len(c.Fields))
	for i, f := range c.Fields {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// What is "prompt" for a prompt's change, else "tool".
func (c Change) What() string {
	if c.Prompt {
		return "prompt"
	}
	return "tool"
}

// Compare lists, sorted by tool, every tool of listed that is not exactly
// as pinned: changed (with the fields that differ), added, or removed.
func Compare(pinned, listed Upstream) []Change {
	return compare(pinned.Server, listed.Server, pinned.Tools, listed.Tools, false)
}

// ComparePrompts is Compare over the prompts.
func ComparePrompts(pinned, listed Upstream) []Change {
	return compare(pinned.Server, listed.Server, pinned.Prompts, listed.Prompts, true)
}

func compare(oldServer, newServer Server, pinned, listed map[string]Tool, prompt bool) []Change {
	var out []Change
	for name, t := range listed {
		old, ok := pinned[name]
		switch {
		case !ok:
			out = append(out, Change{Tool: name, Prompt: prompt, Kind: Added, NewDigest: t.Digest})
		case old.Digest != t.Digest:
			out = append(out, Change{Tool: name, Prompt: prompt, Kind: Changed, OldDigest: old.Digest, NewDigest: t.Digest,
				Fields: fields(oldServer, newServer, old.Definition, t.Definition)})
		}
	}
	for name, t := range pinned {
		if _, ok := listed[name]; !ok {
			out = append(out, Change{Tool: name, Prompt: prompt, Kind: Removed, OldDigest: t.Digest})
		}
	}
	slices.SortFunc(out, func(a, b Change) int { return strings.Compare(a.Tool, b.Tool) })
	return out
}

// fields lists the fields that differ between two canonical definitions,
// server's first, then the tool's members by name.
func fields(oldServer, newServer Server, oldDef, newDef jsontext.Value) []Field {
	var out []Field
	if oldServer.Name != newServer.Name {
		out = append(out, Field{"server.name", quoted(oldServer.Name), quoted(newServer.Name)})
	}
	if oldServer.Version != newServer.Version {
		out = append(out, Field{"server.version", quoted(oldServer.Version), quoted(newServer.Version)})
	}
	var o, n map[string]jsontext.Value
	_ = json.Unmarshal(oldDef, &o)
	_ = json.Unmarshal(newDef, &n)
	var names []string
	for k := range o {
		names = append(names, k)
	}
	for k := range n {
		if _, ok := o[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		// Members of a canonical object are canonical: equal bytes, equal values.
		if string(o[k]) != string(n[k]) {
			out = append(out, Field{k, o[k], n[k]})
		}
	}
	return out
}

func quoted(s string) jsontext.Value {
	b, _ := json.Marshal(s)
	return b
}

// Format writes changes of upstream as a text diff for a terminal or a CI
// log: per tool, its digests, then per field the pinned lines (-) and the
// listed ones (+). What the upstream sent is escaped: no control,
// invisible or bidi character reaches the terminal as itself.
func Format(upstream string, changes []Change) string {
	var b strings.Builder
	for _, c := range changes {
		switch c.Kind {
		case Added:
			fmt.Fprintf(&b, "upstream %q %s %q: added, not pinned (%s)\n", upstream, c.What(), safe(c.Tool), c.NewDigest)
		case Removed:
			fmt.Fprintf(&b, "upstream %q %s %q: removed (pinned %s)\n", upstream, c.What(), safe(c.Tool), c.OldDigest)
		default:
			fmt.Fprintf(&b, "upstream %q %s %q: changed: %s\n  pinned %s\n  listed %s\n",
				upstream, c.What(), safe(c.Tool), safe(c.FieldNames()), c.OldDigest, c.NewDigest)
			for _, f := range c.Fields {
				fmt.Fprintf(&b, "  %s:\n", safe(f.Name))
				b.WriteString(fieldDiff(f))
			}
		}
	}
	return b.String()
}

// fieldDiff is the unified diff of a field's indented JSON, without the
// file headers, each line indented four spaces.
func fieldDiff(f Field) string {
	d := udiff.Unified("pinned", "listed", indented(f.Old), indented(f.New))
	var b strings.Builder
	for _, line := range strings.SplitAfter(d, "\n") {
		if line == "" || strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "+++ ") || strings.HasPrefix(line, "@@") {
			continue
		}
		b.WriteString("    " + safe(strings.TrimSuffix(line, "\n")) + "\n")
	}
	return b.String()
}

// indented is v on several lines, or "(absent)".
func indented(v jsontext.Value) string {
	if v == nil {
		return "(absent)\n"
	}
	v = v.Clone()
	if err := v.Indent(jsontext.WithIndent("  ")); err != nil {
		return string(v) + "\n"
	}
	return string(v) + "\n"
}

// safe escapes every rune that is not printable (control characters,
// escape sequences, zero-width and bidi characters) as \u{XXXX}.
func safe(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == ' ' || (unicode.IsPrint(r) && !unicode.Is(unicode.Cf, r)) {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, `\u{%04X}`, r)
	}
	return b.String()
}
