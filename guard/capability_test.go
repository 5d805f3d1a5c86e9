package guard

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/capability"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/internal/workspacepath"
)

func TestNeeds(t *testing.T) {
	tool := &ToolInfo{Name: "t", PathArgs: []string{"path", "paths", "dir"},
		Capabilities: []string{"fs:read:{path}", "fs:read:{paths}", "fs:read:{dir}/**", "proc:exec:{interpreter}", "graph:read:*"}}
	got, err := Needs(tool, decodeJSON(t, `{"path":"a/./b//c/","paths":["x","y/../z"],"interpreter":"python"}`))
	require.Nil(t, err)
	require.Equal(t, "fs:read:a/b/c fs:read:x fs:read:z fs:read:** proc:exec:python graph:read:*", joinCaps(got))

	got, err = Needs(tool, decodeJSON(t, `{"path":"p","dir":"src","interpreter":"bash"}`))
	require.Nil(t, err)
	require.Contains(t, joinCaps(got), "fs:read:src/**")

	for args, rule := range map[string]string{
		`{"path":"../etc/passwd","interpreter":"python"}`: "path.inside_workspace",
		`{"paths":["ok","/etc"],"interpreter":"python"}`:  "path.relative",
		`{"path":"a"}`:                     "capabilities.argument",
		`{"path":"a","interpreter":7}`:     "capabilities.argument",
		`{"path":"a","interpreter":""}`:    "capabilities.argument",
		`{"path":"a","interpreter":[1,2]}`: "capabilities.argument",
	} {
		_, err := Needs(tool, decodeJSON(t, args))
		require.NotNil(t, err, args)
		require.Equal(t, rule, err.Rule, args)
	}
	_, err = Needs(tool, map[string]any{"path": "a", "paths": []any(nil), "interpreter": "sh"})
	require.Equal(t, "capabilities.argument", err.Rule, "a nil list is no list")
	got, err = Needs(tool, map[string]any{"path": "a", "paths": []any{}, "interpreter": "sh"})
	require.Nil(t, err)
	require.Equal(t, "fs:read:a fs:read:** proc:exec:sh graph:read:*", joinCaps(got), "an empty list needs nothing")
	for _, bad := range []string{"fs:read", "fs", ":read:x", "fs::x", "fs:read:", ""} {
		_, err = Needs(&ToolInfo{Name: "bad", Capabilities: []string{bad}}, nil)
		require.Equal(t, toolerr.Internal, err.Code, bad)
	}
	got, err = Needs(&ToolInfo{Name: "net", Capabilities: []string{"net:connect:example.com:443"}}, nil)
	require.Nil(t, err)
	require.Equal(t, "example.com:443", got[0].Scope, "the scope keeps its colons")
}

// FuzzCovers checks the matcher's promises on arbitrary grants and
// paths: a literal fs need it covers is matched by the grant's glob, and a
// path under a covered subtree need is matched too; a deny that matches any
// path under a need denies the need.
func FuzzCovers(f *testing.F) {
	for _, s := range [][3]string{
		{"src/**", "src/a.go", "x"}, {"**", ".", "a/b"}, {"*.md", "README.md", ""}, {"src/*", "src/..", "../x"},
		{"a/**/b", "a//b", "%2e%2e"}, {"{a,b}/*", "a/x", "y"}, {"[a-z]*", "abc", "/"}, {"src/**", "src", "../../etc"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, glob, path, suffix string) {
		grant, err := capability.Parse("fs:read:" + glob)
		if err != nil {
			return
		}
		clean, err := workspacepath.Clean(path)
		if err != nil || capability.HasGlob(clean) {
			return
		}
		need := capability.Capability{Resource: "fs", Verb: "read", Scope: clean}
		caps := []capability.Capability{grant}
		for _, n := range []capability.Capability{need, {Resource: "fs", Verb: "read", Scope: subtreeOf(clean)}} {
			if (firstCovering(caps, prefixesOf(caps), n, capability.Covers) >= 0) != capability.Covers(grant, n) ||
				(firstCovering(caps, prefixesOf(caps), n, capability.Denies) >= 0) != capability.Denies(grant, n) {
				t.Fatalf("the prefix pre-filter changes the answer for %q and %q", glob, n.Scope)
			}
		}
		if capability.Covers(grant, need) {
			if ok, _ := doublestar.Match(glob, clean); !ok {
				t.Fatalf("grant %q covers %q but does not match it", glob, clean)
			}
		}
		under, err := workspacepath.Clean(clean + "/" + suffix)
		if err != nil || capability.HasGlob(under) || !(under == clean || clean == "." || strings.HasPrefix(under, clean+"/")) {
			return
		}
		tree := capability.Capability{Resource: "fs", Verb: "read", Scope: subtreeOf(clean)}
		if capability.Covers(grant, tree) {
			if ok, _ := doublestar.Match(glob, under); !ok {
				t.Fatalf("grant %q covers subtree %q but not %q under it", glob, tree.Scope, under)
			}
		}
		if ok, _ := doublestar.Match(glob, under); ok && !capability.Denies(grant, tree) {
			t.Fatalf("deny %q matches %q but does not deny the subtree %q", glob, under, tree.Scope)
		}
	})
}

// FuzzNameMatch checks that the literal-head shortcut of tool-name globs
// answers as the glob matcher does, for valid UTF-8 (on invalid bytes
// doublestar matches any two invalid runes alike; the shortcut is stricter).
func FuzzNameMatch(f *testing.F) {
	for _, s := range [][2]string{{"read_*", "read_file"}, {"{a,b}", "b"}, {"tool_0?_*", "tool_01_x"}, {"\\*x", "*x"}, {"a[bc]d", "acd"}, {"", ""}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, glob, name string) {
		if !doublestar.ValidatePattern(glob) || !utf8.ValidString(glob) || !utf8.ValidString(name) {
			return
		}
		want, _ := doublestar.Match(glob, name)
		if got := nameMatch(glob, name); got != want {
			t.Fatalf("nameMatch(%q, %q) = %v, doublestar says %v", glob, name, got, want)
		}
	})
}

// TestCapabilitiesFollowLinks: with a path resolver, an fs need on a path
// that leads elsewhere through a symlink also needs the target: a denial
// of the target applies, and the grants must cover it.
func TestCapabilitiesFollowLinks(t *testing.T) {
	links := map[string]string{"pub/link": "priv/key", "pub/dir": "priv", "up": "."}
	resolve := func(p string) (string, bool) {
		if r, ok := links[p]; ok {
			return r, true
		}
		return p, true
	}
	v := newTestValidator(t, "read_file", "directory_tree")
	decide := func(p Policy, tool, path string) Decision {
		return Decide(Call{Tool: tool, Args: map[string]any{"path": path}}, depthTools[tool], p.WithPathResolver(resolve),
			Limits{MaxCalls: 10, MaxOutputBytes: 10}, State{}, v)
	}
	denied := policyOf(t, []string{"*"}, nil, []string{"fs:read:**"}, []string{"fs:read:priv/**"})
	for _, c := range []struct{ tool, path string }{
		{"read_file", "pub/link"}, {"directory_tree", "pub/dir"}, {"directory_tree", "up"},
	} {
		d := decide(denied, c.tool, c.path)
		require.Equal(t, Deny, d.Outcome, "%s %s", c.tool, c.path)
		require.Equal(t, `capabilities.deny:"fs:read:priv/**"`, d.Rule, "%s %s", c.tool, c.path)
	}
	require.Equal(t, Allow, decide(denied, "read_file", "pub/other").Outcome)

	narrow := policyOf(t, []string{"*"}, nil, []string{"fs:read:pub/**"}, nil)
	d := decide(narrow, "read_file", "pub/link")
	require.Equal(t, "capabilities.missing", d.Rule)
	require.Equal(t, "fs:read:priv/key", d.Missing)
	require.Equal(t, Allow, decide(narrow, "read_file", "pub/other").Outcome)
}

// TestFsNeedsAreCleanedWhateverTheParam: an fs capability filled from a
// parameter that is not declared a path (a declared tool's string param)
// is still a workspace path: "docs/../secrets/key" needs secrets/key, and
// one that climbs out is refused, so no lexical trick passes a deny.
func TestFsNeedsAreCleanedWhateverTheParam(t *testing.T) {
	tool := &ToolInfo{Name: "cat", Capabilities: []string{"fs:read:{file}", "proc:exec:{prog}"}}
	got, err := Needs(tool, decodeJSON(t, `{"file":"docs/../secrets/./key","prog":"a/../b"}`))
	require.Nil(t, err)
	require.Equal(t, "fs:read:secrets/key proc:exec:a/../b", joinCaps(got), "only fs scopes are paths")
	_, err = Needs(tool, decodeJSON(t, `{"file":"../outside","prog":"x"}`))
	require.NotNil(t, err)
	require.Equal(t, "path.inside_workspace", err.Rule)

	p := policyOf(t, []string{"*"}, nil, []string{"fs:read:**", "proc:exec:*"}, []string{"fs:read:secrets/**"})
	v, verr := NewValidator(map[string]json.RawMessage{"cat": json.RawMessage(`{"type":"object"}`)}, nil)
	require.NoError(t, verr)
	d := Decide(Call{Tool: "cat", Args: decodeJSON(t, `{"file":"docs/../secrets/key","prog":"cat"}`)}, tool, p,
		Limits{MaxCalls: 1, MaxOutputBytes: 1}, State{}, v)
	require.Equal(t, `capabilities.deny:"fs:read:secrets/**"`, d.Rule)
}

// TestThroughLinksResolvesAPathOnce: a tool that writes and reads one
// path (edit_file) resolves it once, and both needs follow the link.
func TestThroughLinksResolvesAPathOnce(t *testing.T) {
	calls := map[string]int{}
	p := Policy{}.WithPathResolver(func(path string) (string, bool) {
		calls[path]++
		if path == "pub/link" {
			return "priv/key", true
		}
		return path, true
	})
	needs := []capability.Capability{
		{Resource: "fs", Verb: "write", Scope: "pub/link"}, {Resource: "fs", Verb: "read", Scope: "pub/link"},
		{Resource: "fs", Verb: "write", Scope: "other"}, {Resource: "fs", Verb: "read", Scope: "pub/link/**"},
	}
	got := p.throughLinks(needs)
	require.Equal(t, map[string]int{"pub/link": 1, "other": 1}, calls)
	require.Equal(t, "fs:write:pub/link fs:read:pub/link fs:write:other fs:read:pub/link/** fs:write:priv/key fs:read:priv/key fs:read:priv/key/**", joinCaps(got))
}
