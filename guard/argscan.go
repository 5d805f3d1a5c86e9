package guard

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/toolwarden/toolwarden/guard/outfilter"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// Arguments are checked like outputs: before a call is admitted, the
// output filter's scanners run over its free-text arguments (every string
// but the path arguments, which have rules of their own). A secret in the
// arguments of a tool that sends them out (it writes, reaches the network,
// runs a command or calls an upstream) is refused or redacted; an
// injection marker, an invisible or a control character in any tool's
// arguments is refused or flagged. What is done is configured per tool
// (arguments.tools); the audit line and the result's meta name what was
// found, never the value.

// Argument modes.
const (
	ArgRefuse = "refuse" // deny the call
	ArgRedact = "redact" // secrets: the tool receives [REDACTED:rule] instead
	ArgFlag   = "flag"   // markers: run the call, record the finding
	ArgAllow  = "allow"  // do nothing
)

// ArgRule is what is done with secrets and with markers (injection
// markers, invisible and control characters) found in a tool's arguments,
// with the config keys that set them.
type ArgRule struct {
	Secrets, Markers         string
	SecretsRule, MarkersRule string
}

// ArgScan configures argument scanning. Filter is the scanner (nil turns
// argument scanning off); Secrets and Markers are the defaults
// (arguments.secrets applies only to tools that send their arguments
// out); Tools overrides them per tool-name glob, the most specific
// (longest) matching glob winning.
type ArgScan struct {
	Filter           *outfilter.Filter
	Secrets, Markers string
	Tools            map[string]ArgRule
	// SecretFiles finds the secret files named in the arguments of an
	// upstream server's tools (see secretrefs.go); nil finds none.
	SecretFiles *SecretRefs
}

// DefaultArgScan is the secure default: secrets sent out refused,
// markers flagged.
func DefaultArgScan(f *outfilter.Filter) ArgScan {
	return ArgScan{Filter: f, Secrets: ArgRefuse, Markers: ArgFlag}
}

// ruleFor resolves the rule of tool.
func (a ArgScan) ruleFor(tool *ToolInfo) ArgRule {
	r := ArgRule{Secrets: ArgAllow, SecretsRule: "arguments.secrets.read_only", Markers: a.Markers, MarkersRule: "arguments.markers"}
	if sendsOut(tool.Capabilities) {
		r.Secrets, r.SecretsRule = a.Secrets, "arguments.secrets"
	}
	if r.Markers == "" {
		r.Markers = ArgFlag
	}
	var globs []string
	for g := range a.Tools {
		if nameMatch(g, tool.Name) {
			globs = append(globs, g)
		}
	}
	slices.SortFunc(globs, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
	})
	for _, g := range globs {
		t := a.Tools[g]
		if t.Secrets != "" {
			r.Secrets, r.SecretsRule = t.Secrets, "arguments.tools."+g+".secrets"
		}
		if t.Markers != "" {
			r.Markers, r.MarkersRule = t.Markers, "arguments.tools."+g+".markers"
		}
	}
	return r
}

// sendsOut reports whether a tool with caps sends its arguments somewhere
// a secret must not go: it writes (fs, s3, graph), reaches the network,
// runs a process or calls an upstream server's tool.
func sendsOut(caps []string) bool {
	for _, c := range caps {
		resource, rest, _ := strings.Cut(c, ":")
		verb, _, _ := strings.Cut(rest, ":")
		if verb == "write" || resource == "net" || resource == "proc" || resource == "mcp" {
			return true
		}
	}
	return false
}

// argScan is what scanning a call's arguments found.
type argScan struct {
	rule ArgRule
	// secrets and markers list the findings, "arg: what" (never a value).
	secrets, markers []string
	// files are the secret files an upstream tool's arguments name, and
	// refs looks for them (nil: the tool is none of an upstream's).
	files []SecretRef
	refs  *SecretRefs
	// redacted holds the arguments with their secrets redacted, when the
	// rule redacts and a secret was found.
	redacted any
	// declared are the top-level member names the tool's input schema
	// declares: the tool's words, not the model's, so not scanned.
	declared map[string]bool
	err      error
}

// findings lists everything found, for the audit line and the result's
// meta, each with what was done about it.
func (s *argScan) findings() []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, f := range s.files {
		out = append(out, "names secret file "+f.String())
	}
	for _, f := range s.secrets {
		out = append(out, f+" ("+s.rule.Secrets+", "+s.rule.SecretsRule+")")
	}
	for _, f := range s.markers {
		out = append(out, f+" ("+s.rule.Markers+", "+s.rule.MarkersRule+")")
	}
	return out
}

// scanArgs scans the free-text arguments of call (nil when scanning is
// off, the tool is unknown, or both rules allow everything).
func (g *Guard) scanArgs(call Call) *argScan {
	tool := g.tool(call.Tool)
	a := g.cfg.Arguments
	if a.Filter == nil || tool == nil || call.listing || call.Args == nil {
		return nil
	}
	s := &argScan{rule: a.ruleFor(tool)}
	if upstreamTool(tool.Capabilities) {
		s.refs = a.SecretFiles
	}
	if s.rule.Secrets == ArgAllow && s.rule.Markers == ArgAllow && s.refs == nil {
		return s
	}
	s.declared = g.validator.properties(tool.Name)
	out, changed := s.walk(g.argumentFilter(), tool, "", "", call.Args, 0)
	if changed && s.rule.Secrets == ArgRedact {
		s.redacted = out
	}
	return s
}

// walk scans v, the argument at name (the value of the object member
// member, "" in an array), and returns it with its secrets redacted, and
// whether any was. An object's member names are scanned too (a map keyed
// by tokens is no hiding place), but for the top-level names the tool's
// schema declares. Nothing is copied unless something is
// redacted: an object or array that changed is a shallow copy of v with
// the changed members replaced, v itself is never changed.
func (s *argScan) walk(f *outfilter.Filter, tool *ToolInfo, name, member string, v any, depth int) (any, bool) {
	switch x := v.(type) {
	case string:
		s.files = append(s.files, s.refs.Find(x)...)
		if depth == 1 && slices.Contains(tool.PathArgs, name) {
			return v, false
		}
		if out, changed := s.text(f, name, member, x); changed {
			return out, true
		}
		return v, false
	case map[string]any:
		var out map[string]any // a copy of x, once a member changes
		for k, e := range x {
			key, kc := k, false
			if depth > 0 || !s.declared[k] {
				key, kc = s.text(f, joinArg(name, "(name)"), "", k)
			}
			val, c := s.walk(f, tool, joinArg(name, k), k, e, depth+1)
			if !kc && !c {
				continue
			}
			if out == nil {
				out = maps.Clone(x)
			}
			delete(out, k)
			out[key] = val
		}
		changed := out != nil
		if s.split(f, tool, name, x, &out, depth) {
			changed = true
		}
		if !changed {
			return v, false
		}
		return out, true
	case []any:
		var out []any // a copy of x, once an element changes
		for i, e := range x {
			val, c := s.walk(f, tool, name+"["+strconv.Itoa(i)+"]", "", e, depth+1)
			if !c {
				continue
			}
			if out == nil {
				out = slices.Clone(x)
			}
			out[i] = val
		}
		if out == nil {
			return v, false
		}
		return out, true
	}
	return v, false
}

func joinArg(parent, k string) string {
	if parent == "" {
		return k
	}
	return parent + "." + k
}

// upstreamTool reports whether caps are an upstream server's tool's.
func upstreamTool(caps []string) bool {
	for _, c := range caps {
		if strings.HasPrefix(c, "mcp:") {
			return true
		}
	}
	return false
}

// text scans one string argument, the value of the member member.
func (s *argScan) text(f *outfilter.Filter, name, member, v string) (string, bool) {
	out, rep, err := f.ArgumentMember(member, v)
	if err != nil {
		if s.err == nil {
			s.err = fmt.Errorf("argument %s: %w", name, err)
		}
		return v, false
	}
	if s.rule.Secrets != ArgAllow {
		for _, r := range sortedKeys(rep.Redactions) {
			s.secrets = append(s.secrets, fmt.Sprintf("%s: secret %s", name, r))
		}
	}
	if s.rule.Markers != ArgAllow {
		for _, w := range append(rep.Warnings, rep.Quoted...) {
			s.markers = append(s.markers, fmt.Sprintf("%s: marker %q", name, w))
		}
		if rep.Stripped > 0 {
			s.markers = append(s.markers, fmt.Sprintf("%s: %d invisible or bidi-control characters", name, rep.Stripped))
		}
		if rep.Controls > 0 {
			s.markers = append(s.markers, fmt.Sprintf("%s: %d control characters or terminal sequences", name, rep.Controls))
		}
	}
	return out, out != v && len(rep.Redactions) > 0
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// decision is the arguments check's verdict on the scan.
func (s *argScan) decision(tool string) (Decision, bool) {
	switch {
	case s == nil:
		return Decision{}, false
	case s.err != nil:
		return deny("arguments.scan", toolerr.New(toolerr.DeniedArgument,
			"Send less, or split the text over several calls.",
			"the arguments could not be scanned for secrets and injection markers: %v", s.err)), true
	case len(s.files) > 0:
		f := s.files[0]
		rule := fmt.Sprintf("capabilities.secret_files:%q", f.Glob)
		return deny(rule, toolerr.New(toolerr.DeniedCapability, secretHint,
			"the arguments name %s, a file likely to hold credentials, which %q would read or send on the upstream's side (rule %s)",
			f.Path, tool, rule)), true
	case len(s.secrets) > 0 && s.rule.Secrets == ArgRefuse:
		return deny(s.rule.SecretsRule, toolerr.New(toolerr.DeniedArgumentSecret,
			"Do not send credentials out: write a reference to where the secret is kept (an environment variable's name), not the secret. "+
				"If this is not a secret, ask the operator, who can set "+s.rule.SecretsRule+" otherwise.",
			"the arguments hold what looks like a secret (%s), and %s refuses sending one out through %q",
			strings.Join(s.secrets, "; "), s.rule.SecretsRule, tool)), true
	case len(s.markers) > 0 && s.rule.Markers == ArgRefuse:
		return deny(s.rule.MarkersRule, toolerr.New(toolerr.DeniedArgumentMarker,
			"Remove the invisible or control characters and the instruction-like text from the arguments.",
			"the arguments hold %s, which %s refuses", strings.Join(s.markers, "; "), s.rule.MarkersRule)), true
	}
	return Decision{}, false
}

// note is the trace detail of arguments that passed the scan.
func (s *argScan) note() string {
	if f := s.findings(); len(f) > 0 {
		return "scanned: " + strings.Join(f, "; ")
	}
	if s != nil {
		return fmt.Sprintf("scanned: nothing found (secrets %s by %s, markers %s by %s)",
			s.rule.Secrets, s.rule.SecretsRule, s.rule.Markers, s.rule.MarkersRule)
	}
	return ""
}

// RedactedArgs returns the JSON of the arguments the tool is to receive
// when argument scanning redacted secrets from them (nil otherwise).
func (t *Ticket) RedactedArgs() json.RawMessage {
	if t.call.scan == nil || t.call.scan.redacted == nil {
		return nil
	}
	b, err := json.Marshal(t.call.scan.redacted)
	if err != nil {
		return nil
	}
	return b
}
