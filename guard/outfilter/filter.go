// Package outfilter filters what a tool returns before the model sees it:
// it redacts secrets with gitleaks' default rule set, strips invisible and
// bidirectional-control characters, and reports text that looks like an
// instruction to the model (prompt injection) as a warning, leaving that
// text as it is. Every content type a result can carry goes through it.
package outfilter

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// DefaultMarkers are phrases that, in tool output, look like instructions
// to the model. They are matched case-insensitively after invisible
// characters are stripped; operators add more in output_filter.injection_markers.
var DefaultMarkers = []string{
	"ignore previous instructions", "ignore all previous instructions", "ignore the above instructions",
	"ignore prior instructions", "ignore all prior instructions", "disregard previous instructions",
	"disregard all previous", "disregard prior instructions", "disregard all prior instructions",
	"disregard the above instructions",
	"forget your instructions", "forget your rules", "forget all previous",
	"you are now", "new instructions:", "do not tell the user",
	"<important>", "</important>", "<system>", "</system>", "<instructions>",
	"<|im_start|>", "<|system|>", "[inst]", "<<sys>>",
	`"tools/call"`, // a JSON-RPC request to call a tool, embedded in content
}

// Options configure a Filter.
type Options struct {
	// Redact turns secret redaction on (the default config does).
	Redact bool
	// StripInvisible removes invisible and bidi-control characters.
	StripInvisible bool
	// Markers are added to DefaultMarkers.
	Markers []string
	// ToolNames are the names of the tools this server offers: text asking
	// to call one ("call update_task_status", see toolCall) is warned about
	// like a marker. The server passes its tool list; none is built in.
	ToolNames []string
	// Definition adds the phrase classes that only tool definitions are
	// read for (see phraseClasses).
	Definition bool
}

// DefaultOptions is the secure default: everything on.
func DefaultOptions() Options { return Options{Redact: true, StripInvisible: true} }

// Filter is safe for concurrent use.
type Filter struct {
	opts Options
	// once runs build at the filter's first use; err is its error. Every
	// entry point (Result, JSON, Text) goes through wait.
	once sync.Once
	err  error

	rules   []secretRule
	global  []allowlist
	keys    *keywordDFA
	hits    [][]int // pattern -> rule indexes (nil for a marker or tool name)
	markers []string
	// anchors are the phrase classes' anchor words, after the markers:
	// anchorClasses[i] are the classes anchor i starts (see phraseClass).
	anchors       []string
	anchorClasses [][]int
	classes       []*phraseClass
	tools         []string
	// squashed are the tool names without `_` (see closeTool).
	squashed []string
	nKeys    int // patterns below nKeys are keywords, then markers, tool names, call verbs
	spans    sync.Pool
}

// New returns a filter whose rules are compiled at its first use:
// compiling gitleaks' rule set takes tens of milliseconds of CPU and keeps
// ~17 MB live, which a server that is started and listed but never called
// (an IDE window left open), or a command that calls nothing (tools,
// config check, policy explain), need not pay. Uses that come while it
// compiles wait for it; a rule set that fails to compile fails every use
// (ErrRules), so nothing passes unfiltered.
func New(o Options) (*Filter, error) {
	return &Filter{opts: o}, nil
}

// ErrRules is the error of every use of a filter whose rules failed to
// compile.
var ErrRules = errors.New("the output filter's secret rules could not be compiled")

// wait builds the filter at its first use, or waits for the build under
// way, and returns its error.
func (f *Filter) wait() error {
	f.once.Do(func() { f.err = f.build() })
	if f.err != nil {
		return fmt.Errorf("%w: %v", ErrRules, f.err)
	}
	return nil
}

// build compiles the rule set (once per process) and the keyword
// automaton over the rules' keywords, the markers and the tool names.
func (f *Filter) build() error {
	o := f.opts
	if o.Redact {
		set, err := loadRules()
		if err != nil {
			return err
		}
		f.rules, f.global = set.rules, set.global
	}
	byKeyword := map[string][]int{}
	for i, r := range f.rules {
		for _, k := range r.keywords {
			byKeyword[k] = append(byKeyword[k], i)
		}
	}
	keys := make([]string, 0, len(byKeyword))
	for k := range byKeyword {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var patterns []string
	for _, k := range keys {
		patterns = append(patterns, k)
		f.hits = append(f.hits, byKeyword[k])
	}
	f.nKeys = len(keys)
	seen := map[string]bool{}
	for _, m := range append(append([]string{}, DefaultMarkers...), o.Markers...) {
		m = strings.ToLower(strings.TrimSpace(m))
		if m == "" || seen[m] {
			continue
		}
		seen[m] = true
		patterns = append(patterns, m)
		f.markers = append(f.markers, m)
		f.hits = append(f.hits, nil)
	}
	f.classes = classesFor(o.Definition)
	byAnchor := map[string]int{}
	for ci, c := range f.classes {
		for _, a := range c.anchors {
			i, ok := byAnchor[a]
			if !ok {
				i = len(f.anchors)
				byAnchor[a] = i
				f.anchors = append(f.anchors, a)
				f.anchorClasses = append(f.anchorClasses, nil)
				patterns = append(patterns, a)
				f.hits = append(f.hits, nil)
			}
			f.anchorClasses[i] = append(f.anchorClasses[i], ci)
		}
	}
	for _, t := range o.ToolNames {
		if t = strings.ToLower(t); t != "" {
			patterns = append(patterns, t)
			f.tools = append(f.tools, t)
			f.squashed = append(f.squashed, squash(t))
			f.hits = append(f.hits, nil)
		}
	}
	if len(f.tools) > 0 { // the verbs, for names close to the tools' (nearCall)
		for _, v := range callVerbList {
			patterns = append(patterns, v)
			f.hits = append(f.hits, nil)
		}
	}
	f.keys = newKeywordDFA(patterns)
	return nil
}

// Report says what a filter changed in one result.
type Report struct {
	// Redactions counts redacted secrets by rule ID.
	Redactions map[string]int `json:"redactions,omitempty"`
	// Stripped counts invisible or bidi-control characters removed.
	Stripped int `json:"stripped,omitempty"`
	// Controls counts terminal control sequences and control characters
	// removed (see controlAt).
	Controls int `json:"controls,omitempty"`
	// Defanged counts markdown images to an outside host made inert.
	Defanged int `json:"defanged,omitempty"`
	// Collapsed counts long runs of blank space replaced by a marker.
	Collapsed int `json:"collapsed,omitempty"`
	// Warnings name what was found, each once: the injection markers, the
	// tool calls asked for ("call update_task_status"), WarnImage and
	// WarnBlank.
	Warnings []string `json:"warnings,omitempty"`
	// Quoted name the markers found only inside a quotation that a word
	// such as "like" or "for example" introduces: mentioned, not addressed
	// to the model (see quoted.go). Output gets no warning for them.
	Quoted []string `json:"quoted,omitempty"`
	// checks counts the rule checks run (anchored matches and windows);
	// past MaxChecks the result is not scanned further and is withheld.
	checks int
}

// MaxChecks bounds the rule checks one result may cost (~15 µs each at
// worst). The benchmarks' realistic 1 MiB text needs ~4,600; 1 MiB of
// "api-=" repeated needs ~200,000 and took ~3 s of CPU, so a result that
// dense in secret-like candidates is withheld (ErrTooDense) rather than
// scanned at that cost or passed unscanned.
const MaxChecks = 50000

// ErrTooDense is returned for a result with more than MaxChecks candidates.
var ErrTooDense = errors.New("the output holds too many secret-like candidates to check")

// spend counts one check and reports whether the budget allows it.
func (r *Report) spend() bool {
	r.checks++
	return r.checks <= MaxChecks
}

// quiet reports whether r says nothing: no redaction, removal, warning or
// other finding (the rule checks it cost are not a finding). A field added
// to Report must be added here: TestReportQuiet sets each in turn.
func (r Report) quiet() bool {
	return len(r.Redactions) == 0 && r.Stripped == 0 && r.Controls == 0 && r.Defanged == 0 &&
		r.Collapsed == 0 && len(r.Warnings) == 0 && len(r.Quoted) == 0
}

// Redacted is the total number of redactions.
func (r Report) Redacted() int {
	n := 0
	for _, c := range r.Redactions {
		n += c
	}
	return n
}

func (r *Report) redacted(rule string) {
	if r.Redactions == nil {
		r.Redactions = map[string]int{}
	}
	r.Redactions[rule]++
}

func (r *Report) warn(marker string) {
	for _, w := range r.Warnings {
		if w == marker {
			return
		}
	}
	r.Warnings = append(r.Warnings, marker)
}

// quote records a marker found inside a quoted mention (see quoted.go).
func (r *Report) quote(marker string) {
	for _, w := range r.Quoted {
		if w == marker {
			return
		}
	}
	r.Quoted = append(r.Quoted, marker)
}

// finding records marker, found at s[at:end], as a warning or, inside a
// quoted mention, as quoted.
func (r *Report) finding(marker, s string, at, end int) {
	if quotedMention(s, at, end) {
		r.quote(marker)
		return
	}
	r.warn(marker)
}

// Redaction is what replaces a secret found by rule.
func Redaction(rule string) string { return "[REDACTED:" + rule + "]" }
