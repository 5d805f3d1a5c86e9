package configs

import (
	"fmt"
	"slices"
	"sort"

	"github.com/bmatcuk/doublestar/v4"
)

// Arguments says what the guard does with what the output filter's
// scanners find in a call's free-text arguments before it is admitted
// (docs/output-filter.md, "Arguments"). Secrets applies to tools that
// send their arguments out (they write, reach the network, run a process
// or call an upstream): refuse (the default), redact or allow. Markers
// applies to every tool, for injection markers, invisible and control
// characters: refuse, flag (the default: the call runs, the audit line
// and the result's meta name the finding) or allow. Tools overrides both
// per tool-name glob, the longest matching glob winning; a per-tool
// secrets rule applies whether or not the tool sends out.
type Arguments struct {
	Secrets string                  `mapstructure:"secrets" yaml:"secrets"`
	Markers string                  `mapstructure:"markers" yaml:"markers"`
	Tools   map[string]ArgumentRule `mapstructure:"tools" yaml:"tools"`
}

// ArgumentRule is arguments.tools' entry for one glob; an empty field
// keeps the default.
type ArgumentRule struct {
	Secrets string `mapstructure:"secrets" yaml:"secrets"`
	Markers string `mapstructure:"markers" yaml:"markers"`
}

// The modes arguments.secrets and arguments.markers take.
var (
	SecretModes = []string{"refuse", "redact", "allow"}
	MarkerModes = []string{"refuse", "flag", "allow"}
)

func (a Arguments) validate(add func(string, string, ...any)) {
	// "" is the default (a Config built in code is the secure one).
	mode := func(key, v string, modes []string, empty bool) {
		if (v != "" || !empty) && !slices.Contains(modes, v) {
			add(key, "%q is not one of %v", v, modes)
		}
	}
	mode("arguments.secrets", a.Secrets, SecretModes, true)
	mode("arguments.markers", a.Markers, MarkerModes, true)
	for g, r := range a.Tools {
		if g == "" || !doublestar.ValidatePattern(g) {
			add("arguments.tools", "%q is not a valid tool-name glob", g)
		}
		mode("arguments.tools."+g+".secrets", r.Secrets, SecretModes, true)
		mode("arguments.tools."+g+".markers", r.Markers, MarkerModes, true)
	}
}

// pastTense is what a default argument mode does to what is found.
var pastTense = map[string]string{"refuse": "refused", "flag": "flagged"}

// argumentWidenings lists the argument rules that let through what the
// defaults refuse or flag.
func argumentWidenings(l *Loaded) []string {
	a := l.Config.Arguments
	var out []string
	widen := func(key, v, def string) {
		if v == "allow" || (v == "redact" && def == "refuse") {
			out = append(out, fmt.Sprintf("%s is %s: what the argument scan finds is no longer %s (from %s)", key, v, pastTense[def], l.Origin(key)))
		}
	}
	widen("arguments.secrets", a.Secrets, "refuse")
	widen("arguments.markers", a.Markers, "flag")
	globs := make([]string, 0, len(a.Tools))
	for g := range a.Tools {
		globs = append(globs, g)
	}
	sort.Strings(globs)
	for _, g := range globs {
		widen("arguments.tools."+g+".secrets", a.Tools[g].Secrets, "refuse")
		widen("arguments.tools."+g+".markers", a.Tools[g].Markers, "flag")
	}
	return out
}
