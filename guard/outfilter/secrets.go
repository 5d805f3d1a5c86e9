package outfilter

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
)

// secretRule is one detection rule: gitleaks' fields, plus how far after a
// keyword hit a match may end.
type secretRule struct {
	id      string
	re      *regexp.Regexp
	group   int // capture group holding the secret; 0: first non-empty group, else the match
	entropy float64
	allow   []allowlist
	// keywords are lower-case; a rule without one is never run (gitleaks'
	// default set has none that are not path rules).
	keywords []string
	after    int
	// fast, when set, replaces the windowed search (see fast.go).
	fast *anchored
}

// Window sizes around a keyword hit. gitleaks' rules are bounded (a
// keyword is at most ~100 bytes into a match, a value at most ~150 bytes),
// except the multi-line ones such as private-key blocks.
const (
	windowBefore    = 256
	windowAfter     = 512
	windowMultiLine = 16 << 10
)

// extraRules fill gaps in gitleaks' default set. Each is documented in
// docs/output-filter.md.
var extraRules = []struct{ id, re, keyword string }{
	// A password in a URL's userinfo: scheme://user:PASSWORD@host.
	// gitleaks only has service-specific variants (sidekiq, curl).
	{"url-password", `(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/?#@"'<>]{1,128}:([^\s/?#@"'<>]{1,256})@[^\s/?#@"'<>]`, "://"},
}

// loadRules parses gitleaks' embedded default configuration (once per
// process: compiling its ~220 regular expressions takes ~0.1 s) and appends
// extraRules. Rules bound to file paths are left out: tool output has none.
var loadRules = sync.OnceValues(func() (ruleSet, error) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return ruleSet{}, fmt.Errorf("gitleaks default rules: %w", err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return ruleSet{}, fmt.Errorf("gitleaks default rules: %w", err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		return ruleSet{}, fmt.Errorf("gitleaks default rules: %w", err)
	}
	var rules []secretRule
	for _, id := range cfg.OrderedRules {
		r := cfg.Rules[id]
		if r.Regex == nil || r.Path != nil || len(r.Keywords) == 0 || r.SkipReport {
			continue
		}
		after := windowAfter
		if strings.Contains(r.Regex.String(), `[\s\S`) {
			after = windowMultiLine
		}
		rules = append(rules, secretRule{id: r.RuleID, re: r.Regex, group: r.SecretGroup, entropy: r.Entropy,
			allow: withoutExamples(r.Allowlists), keywords: r.Keywords, after: after, fast: anchoredForm(r.RuleID, r.Regex.String(), r.Keywords)})
	}
	for _, x := range extraRules {
		rules = append(rules, secretRule{id: x.id, re: regexp.MustCompile(x.re), group: 1,
			keywords: []string{x.keyword}, after: windowAfter})
	}
	return ruleSet{rules, withoutExamples(cfg.Allowlists)}, nil
})

// withoutExamples drops from gitleaks' allowlists what exempts a value for
// looking like an example: aws-access-token's `.+EXAMPLE$` and the generic
// rule's stop word "example". A repository scanner skips documentation
// samples to spare a human false alarms; in tool output a false alarm
// costs one redacted sample, a miss a leaked credential, and "example"
// inside a password (`DB_PASSWORD=Example-Prod-7xQ2…`) is no proof it is
// one. A list left with nothing to check is dropped: it allowed only
// examples.
func withoutExamples(lists []*config.Allowlist) []allowlist {
	out := make([]allowlist, 0, len(lists))
	for _, a := range lists {
		regexes := slices.DeleteFunc(slices.Clone(a.Regexes), func(re *regexp.Regexp) bool {
			return strings.Contains(re.String(), "EXAMPLE")
		})
		var words []string
		for _, w := range a.StopWords {
			if w = strings.ToLower(w); w != "example" && w != "" && !slices.Contains(words, w) {
				words = append(words, w)
			}
		}
		if len(a.Commits) == 0 && len(a.Paths) == 0 && len(regexes) == 0 && len(words) == 0 {
			continue
		}
		c := &config.Allowlist{Description: a.Description, MatchCondition: a.MatchCondition, Commits: a.Commits,
			Paths: a.Paths, RegexTarget: a.RegexTarget, Regexes: regexes}
		l := allowlist{Allowlist: c, stopWords: words}
		if len(words) > 0 {
			l.stop = newKeywordDFA(words)
		}
		out = append(out, l)
	}
	return out
}

// allowlist is a gitleaks allowlist whose stop words a keywordDFA finds
// instead of gitleaks' trie, which Allowlist.Validate builds: the generic
// rule's 1,446 stop words make that trie (a 256-entry row per node) ~8.6
// MB, half the filter's memory, where the DFA over byte classes needs a
// fraction. The embedded list is not validated: its regexes are tried one
// by one (RegexAllowed), and it holds no stop words.
type allowlist struct {
	*config.Allowlist
	// stop finds the lower-case stop words; nil without any.
	stop      *keywordDFA
	stopWords []string
}

// containsStopWord reports whether s, lower-cased, contains a stop word,
// as gitleaks' Allowlist.ContainsStopWord does.
func (a allowlist) containsStopWord(s string) bool {
	if a.stop == nil || s == "" {
		return false
	}
	found := false
	a.stop.walk(strings.ToLower(s), func(int, int32) { found = true })
	return found
}

// ruleSet is the compiled rules and gitleaks' global allowlists.
type ruleSet struct {
	rules  []secretRule
	global []allowlist
}

// secret returns the secret's span within a match (FindSubmatchIndex
// form), gitleaks' way: the configured group, else the first non-empty
// group, else the whole match.
func (r *secretRule) secret(m []int) (int, int) {
	if r.group > 0 && 2*r.group+1 < len(m) && m[2*r.group] >= 0 {
		return m[2*r.group], m[2*r.group+1]
	}
	if r.group == 0 {
		for g := 1; 2*g+1 < len(m); g++ {
			if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
				return m[2*g], m[2*g+1]
			}
		}
	}
	return m[0], m[1]
}

// allowed applies gitleaks' allowlists (the global ones and the rule's) to
// a finding, as gitleaks does: the regexes look at the secret, the match or
// the line, and stop words at the secret.
func allowed(lists []allowlist, secret, match, line string) bool {
	for _, a := range lists {
		target := secret
		switch a.RegexTarget {
		case "match":
			target = match
		case "line":
			target = line
		}
		re := a.RegexAllowed(target)
		stop := a.containsStopWord(secret)
		if a.MatchCondition == config.AllowlistMatchAnd {
			// Path and commit conditions never hold for tool output.
			if len(a.Paths) == 0 && len(a.Commits) == 0 &&
				(len(a.Regexes) == 0 || re) && (a.stop == nil || stop) {
				return true
			}
			continue
		}
		if re || stop {
			return true
		}
	}
	return false
}

// shannonEntropy is gitleaks' entropy measure, in bits per character
// (over runes, divided by the length in bytes, exactly as gitleaks does).
func shannonEntropy(s string) float64 {
	if s == "" {
		return 0
	}
	var ascii [128]int
	var other map[rune]int
	for _, c := range s {
		if c < 128 {
			ascii[c]++
			continue
		}
		if other == nil {
			other = map[rune]int{}
		}
		other[c]++
	}
	e, inv := 0.0, 1/float64(len(s))
	add := func(n int) {
		if n > 0 {
			f := float64(n) * inv
			e -= f * math.Log2(f)
		}
	}
	for _, n := range ascii {
		add(n)
	}
	for _, n := range other {
		add(n)
	}
	return e
}
