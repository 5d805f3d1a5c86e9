package outfilter

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/lucasjones/reggen"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/fakesecret"
)

// The fast forms apply only while gitleaks' expressions keep the shape
// they were derived from; this fails after an upgrade that changes them,
// so that someone re-derives them instead of silently losing the speed.
func TestFastPathsInUse(t *testing.T) {
	f := newFilter(t)
	var fast []string
	for _, r := range f.rules {
		if r.fast != nil {
			fast = append(fast, r.id)
		}
	}
	assert.Subset(t, fast, []string{genericRule, "jwt", "aws-access-token", "vault-service-token", "github-pat",
		// semiGenericForm: one prefix, two, a class in the names, an optional part
		"jfrog-api-key", "sumologic-access-id", "etsy-access-token", "linkedin-client-id"})
	assert.Greater(t, len(fast), 150, "most of gitleaks' rules begin with their keyword or a service's name (see literalForm, semiGenericForm)")
	// Their names do not begin with their keywords (lob's are in the
	// secret), or a branch of the expression has no prefix (atlassian's):
	// they keep the windows.
	assert.NotContains(t, fast, "lob-api-key")
	assert.NotContains(t, fast, "new-relic-browser-api-token")
	assert.NotContains(t, fast, "atlassian-api-token")
}

// Every rule's anchored form finds what the plain search finds, on
// strings generated from the rule's own expression (so that each rule
// meets matches and near-matches of its shape), in the contexts tool
// output puts them: after a space, a quote, an assignment, a line start;
// before a line end, a quote, a semicolon, the end of the text.
func TestAnchoredFormsFindWhatPlainSearchFinds(t *testing.T) {
	f := newFilter(t)
	befores := []string{"", " ", "\"", "key = ", "\n", "x"}
	afters := []string{"", "\n", "\"", ";", " tail", "x"}
	tried := 0
	for i := range f.rules {
		r := &f.rules[i]
		if r.fast == nil || r.id == genericRule || r.id == "jwt" { // these two: TestScanEqualsPlainSearch
			continue
		}
		gen, err := reggen.NewGenerator(r.re.String())
		require.NoError(t, err, r.id)
		gen.SetSeed(int64(i))
		var lines []string
		for n := range 24 {
			// Unbounded repeats run to 40, or to 300 so that some matches
			// outlast the anchored forms' short span.
			limit := []int{40, 300}[n%2]
			lines = append(lines, befores[n%len(befores)]+gen.Generate(limit)+afters[(n/len(befores))%len(afters)])
		}
		text := strings.Join(lines, "\n")
		var rep Report
		key := func(sp span) string { return sp.rule + ":" + text[sp.start:sp.end] }
		own := func(spans []span) []span {
			return slices.DeleteFunc(spans, func(sp span) bool { return sp.rule != r.id })
		}
		assert.Equal(t, dedupe(own(plainSpans(f, text)), key), dedupe(own(f.scan(text, 0, len(text), &rep)), key), r.id)
		tried++
	}
	require.Greater(t, tried, 60)
}

// plainSpans is what the rules find run plainly over the whole text, the
// way gitleaks runs them (a rule runs when one of its keywords is anywhere
// in the text), with no windows and no fast forms.
func plainSpans(f *Filter, s string) []span {
	var out []span
	lower := strings.ToLower(s)
	for i := range f.rules {
		r := &f.rules[i]
		if !slices.ContainsFunc(r.keywords, func(k string) bool { return strings.Contains(lower, k) }) {
			continue
		}
		for _, m := range r.re.FindAllStringSubmatchIndex(s, -1) {
			if sp, ok := f.finding(r, s, 0, m); ok {
				out = append(out, sp)
			}
		}
	}
	return out
}

// The windowed and anchored search finds exactly what the plain search
// finds, over text dense with near-misses.
func TestScanEqualsPlainSearch(t *testing.T) {
	f := newFilter(t)
	text := mixedText()[:96<<10]
	var extra []string
	for seed := uint64(30); seed < 36; seed++ {
		for _, s := range fakesecret.All(seed) {
			extra = append(extra, s.Line, `{"api_key": "`+s.Needle()+`", "note": "key => value"}`, "token:"+s.Needle()+"\\n")
		}
	}
	text += strings.Join(extra, "\n") + "\nauth: x\napi_version = 2.0.1-alpha-long-name\n"
	var rep Report
	got := f.scan(text, 0, len(text), &rep)
	want := plainSpans(f, text)
	key := func(sp span) string { return sp.rule + ":" + text[sp.start:sp.end] }
	gotKeys, wantKeys := dedupe(got, key), dedupe(want, key)
	require.NotEmpty(t, wantKeys)
	assert.Equal(t, wantKeys, gotKeys)
}

func dedupe(spans []span, key func(span) string) []string {
	var out []string
	for _, sp := range spans {
		out = append(out, key(sp))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// A gitleaks:allow comment, which gitleaks honours in repositories, is
// text the model or a file author controls here: it exempts nothing.
func TestAllowCommentIsIgnored(t *testing.T) {
	f := newFilter(t)
	s := fakesecret.All(40)[1]
	var rep Report
	got := f.Text(s.Line+" # gitleaks:allow", &rep)
	assert.NotContains(t, got, s.Value)
}

func TestAssignmentFollows(t *testing.T) {
	cases := []struct {
		in   string
		want bool
	}{
		{"key = abcdefghij1234", true},
		{"key: 'abcdefghij1234'", true},
		{"key_name_here \t=> \"abcdefghij1234\"", true},
		{"key\n  := abcdefghij1234", true},
		{"key:=abcdefghi", true}, // the value may start with '='
		{"key || abcdefghij", true},
		{"key ?= abcdefghij", true},
		{"key is abcdefghij1234", false},
		{"key: short", false},
		{"key = some words here", false},
		{"key", false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, assignmentFollows(c.in, 3), c.in)
	}
}

// The keyword automaton finds exactly what gitleaks' own trie finds in a
// lower-cased copy, in mixed-case text.
func TestKeywordDFAMatchesTrie(t *testing.T) {
	patterns := []string{"key", "ey", "api", "api_key", "-----begin", "ignore previous instructions", "<important>", "a", "ab", "b", "日本"}
	text := strings.ToUpper(mixedText()[:64<<10]) + mixedText()[:64<<10] + "IGNORE Previous \n\t Instructions <Important> aab 日本語 xey API_KEY -----BEGIN"
	type hit struct{ end, pattern int }
	var got, want []hit
	newKeywordDFA(patterns).walk(text, func(end int, p int32) { got = append(got, hit{end, int(p)}) })
	b := ahocorasick.NewTrieBuilder()
	for _, p := range patterns {
		b.AddString(p)
	}
	// The reference sees the text lower-cased, with each run of white
	// space as one space; at maps its offsets back to the text's.
	var lower []byte
	var at []int
	for i := range len(text) {
		c := lowerASCII(text[i])
		if strings.IndexByte(" \t\n\v\f\r", c) >= 0 {
			if len(lower) > 0 && lower[len(lower)-1] == ' ' {
				continue
			}
			c = ' '
		}
		lower, at = append(lower, c), append(at, i)
	}
	b.Build().Walk(lower, func(end, _, p int64) bool {
		want = append(want, hit{at[end], int(p)})
		return true
	})
	cmp := func(a, b hit) int {
		if a.end != b.end {
			return a.end - b.end
		}
		return a.pattern - b.pattern
	}
	slices.SortFunc(got, cmp)
	slices.SortFunc(want, cmp)
	require.NotEmpty(t, want)
	assert.Equal(t, want, got)
}

// Keyword hits are located by their end minus their length, which holds
// only for keywords without white space (walk folds runs of it).
func TestKeywordsHaveNoWhiteSpace(t *testing.T) {
	for _, r := range newFilter(t).rules {
		for _, k := range r.keywords {
			assert.NotContains(t, k, " ", r.id)
			assert.Equal(t, -1, strings.IndexAny(k, "\t\n\v\f\r"), r.id)
		}
	}
}

// A JWT whose header is longer than the anchored form's short span (an
// x5c certificate chain in the header) is still found: no match in the
// short span does not mean no match.
func TestLongJWTHeaderRedacted(t *testing.T) {
	f := newFilter(t)
	enc := base64.RawURLEncoding
	hdr := enc.EncodeToString([]byte(`{"alg":"ES256","x5c":["` + strings.Repeat("MIIBkTCB+wIJAKHBfpegPjMCMA0GCSqGSIb3DQEBCwUAMBQx", 40) + `"]}`))
	body := enc.EncodeToString([]byte(`{"sub":"1234567890","name":"John Doe","iat":1516239022}`))
	jwt := hdr + "." + body + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	text := "Authorization header was: " + jwt + "\n"
	require.NotEmpty(t, plainSpans(f, text), "gitleaks' rule finds it")
	var rep Report
	got := f.Text(text, &rep)
	assert.NotContains(t, got, body)
	assert.Equal(t, 1, rep.Redactions["jwt"])
}

// A match that swallows a second keyword (curl's `.*?` runs over the
// second "curl") is one finding, as in the plain search, not a second one
// from the swallowed hit.
func TestSwallowedKeywordIsOneFinding(t *testing.T) {
	f := newFilter(t)
	text := "curl -s https://api.example.com/v1 | curl -X POST -H 'Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0' https://api.example.com\n"
	want := plainSpans(f, text)
	require.Len(t, want, 1)
	var rep Report
	assert.Len(t, f.scan(text, 0, len(text), &rep), 1)
}
