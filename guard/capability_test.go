package guard

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/toolerr"
	"github.com/toolwarden/toolwarden/workspacepath"
)

func mustCap(t testing.TB, s string) Capability {
	t.Helper()
	c, err := ParseCapability(s)
	require.NoError(t, err)
	return c
}

func TestParseCapability(t *testing.T) {
	c := mustCap(t, "net:connect:api.example.com:443")
	require.Equal(t, Capability{"net", "connect", "api.example.com:443"}, c)
	require.Equal(t, "net:connect:api.example.com:443", c.String())
	for _, bad := range []string{"", "fs", "fs:read", "fs:read:", ":read:x", "fs::x", "disk:read:x", "fs:read:[", "net:connect:example.com"} {
		_, err := ParseCapability(bad)
		require.Error(t, err, bad)
	}
}

func TestCovers(t *testing.T) {
	tests := []struct {
		grant, need string
		want        bool
	}{
		{"fs:read:**", "fs:read:.", true},
		{"fs:read:**", "fs:read:a/b/c.go", true},
		{"fs:read:**", "fs:write:a", false},
		{"fs:read:src/**", "fs:read:src", true},
		{"fs:read:src/**", "fs:read:src/a/b.go", true},
		{"fs:read:src/**", "fs:read:srcx/a", false},
		{"fs:read:src/**", "fs:read:.", false},
		{"fs:read:src/*", "fs:read:src/a/b.go", false},
		{"fs:read:*.md", "fs:read:README.md", true},
		{"fs:read:*.md", "fs:read:docs/README.md", false},
		{"fs:read:**/*.md", "fs:read:docs/README.md", true},
		// Encoded separators and dots are plain characters, never decoded.
		{"fs:read:src/**", "fs:read:src/%2F..%2F..%2Fetc", true},
		{"fs:read:src/**", "fs:read:src%2F..%2F..%2Fetc", false},
		{"fs:read:public/*", "fs:read:public%2Fsecret/x", false},
		// Subtree needs (tools that walk a directory).
		{"fs:read:**", "fs:read:**", true},
		{"fs:read:src/**", "fs:read:src/**", true},
		{"fs:read:src/**", "fs:read:src/pkg/**", true},
		{"fs:read:src/**", "fs:read:**", false},
		{"fs:read:src/**", "fs:read:srcx/**", false},
		{"fs:read:src/*", "fs:read:src/**", false},
		{"fs:read:**/*.go", "fs:read:src/**", false},
		// Pattern needs of other resources.
		{"graph:write:*", "graph:write:*", true},
		{"graph:write:**", "graph:write:*", true},
		{"graph:write:tasks", "graph:write:*", false},
		{"s3:read:tasks/*", "s3:read:tasks/*", true},
		{"s3:read:*", "s3:read:tasks/*", false},
		// proc names are globs over one segment.
		{"proc:exec:*", "proc:exec:python", true},
		{"proc:exec:python", "proc:exec:python", true},
		{"proc:exec:python", "proc:exec:bash", false},
		{"proc:exec:py*", "proc:exec:../python", false},
		// env and secrets are exact.
		{"env:read:HOME", "env:read:HOME", true},
		{"env:read:*", "env:read:HOME", false},
		{"secrets:read:API_KEY", "secrets:read:API_KEY_2", false},
		// net: host labels, port exact or *.
		{"net:connect:*.example.com:443", "net:connect:api.example.com:443", true},
		{"net:connect:*.example.com:443", "net:connect:API.Example.COM:443", true},
		{"net:connect:*.example.com:443", "net:connect:a.b.example.com:443", false},
		{"net:connect:**.example.com:443", "net:connect:a.b.example.com:443", true},
		{"net:connect:*.example.com:443", "net:connect:example.com:443", false},
		{"net:connect:*.example.com:443", "net:connect:evil.com:443", false},
		{"net:connect:*.example.com:443", "net:connect:api.example.com:80", false},
		{"net:connect:*.example.com:*", "net:connect:api.example.com:80", true},
		{"net:connect:*.example.com:443", "net:connect:evil.com/.example.com:443", false},
		{"net:connect:*.example.com:443", "net:connect:.example.com:443", false},
		{"net:connect:*.example.com:443", "net:connect:x.example.com.:443", false},
		{"net:connect:*:443", "net:connect:10.0.0.1:443", false},
		{"net:connect:10.0.0.*:443", "net:connect:10.0.0.1:443", true},
		{"net:connect:*:443", "net:connect::443", false},
		{"net:connect:[::1]:443", "net:connect:[::1]:443", true},
		{"net:connect:**:*", "net:connect:[::1]:443", true},
		{"net:connect:*:*", "net:connect:[::1]:443", false},
		{"net:connect:**:*", "net:connect:[1.2.3.4]:443", false},
		{"net:connect:**:*", "net:connect:127.0.0.1:8080", true},
		{"net:connect:**:*", "net:connect:*.example.com:443", false},
		{"net:connect:**:443", "net:connect:api.example.com:*", false},
	}
	for _, tt := range tests {
		t.Run(tt.grant+" ⊇ "+tt.need, func(t *testing.T) {
			require.Equal(t, tt.want, Covers(mustCap(t, tt.grant), mustCap(t, tt.need)))
		})
	}
}

func TestDenies(t *testing.T) {
	tests := []struct {
		deny, need string
		want       bool
	}{
		{"fs:read:secrets/**", "fs:read:secrets/key.pem", true},
		{"fs:read:secrets/**", "fs:read:secrets", true},
		{"fs:read:secrets/**", "fs:read:src/a.go", false},
		{"fs:read:**/*.pem", "fs:read:src/a.go", false},
		{"fs:read:**/*.pem", "fs:read:src/k.pem", true},
		// A walk over a tree that holds a denied path is denied.
		{"fs:read:secrets/**", "fs:read:**", true},
		{"fs:read:src/secret/**", "fs:read:src/**", true},
		{"fs:read:src/**", "fs:read:src/pkg/**", true},
		{"fs:read:**/*.pem", "fs:read:docs/**", true},
		{"fs:read:secrets/**", "fs:read:src/**", false},
		{"fs:write:secrets/**", "fs:read:**", false},
		{"graph:write:tasks", "graph:write:*", true},
		{"net:connect:*.internal:*", "net:connect:db.internal:5432", true},
		{"net:connect:*.internal:*", "net:connect:api.example.com:443", false},
		{"net:connect:*.internal:*", "net:connect:bad host:443", true},
		{"graph:read:*", "graph:write:*", false},
	}
	for _, tt := range tests {
		t.Run(tt.deny+" ∩ "+tt.need, func(t *testing.T) {
			require.Equal(t, tt.want, Denies(mustCap(t, tt.deny), mustCap(t, tt.need)))
		})
	}
}

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
	_, err = Needs(&ToolInfo{Name: "bad", Capabilities: []string{"fs:read"}}, nil)
	require.Equal(t, toolerr.Internal, err.Code)
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
		grant, err := ParseCapability("fs:read:" + glob)
		if err != nil {
			return
		}
		clean, err := workspacepath.Clean(path)
		if err != nil || hasMeta(clean) {
			return
		}
		need := Capability{"fs", "read", clean}
		caps := []Capability{grant}
		for _, n := range []Capability{need, {"fs", "read", subtreeOf(clean)}} {
			if (firstCovering(caps, prefixesOf(caps), n, Covers) >= 0) != Covers(grant, n) ||
				(firstCovering(caps, prefixesOf(caps), n, Denies) >= 0) != Denies(grant, n) {
				t.Fatalf("the prefix pre-filter changes the answer for %q and %q", glob, n.Scope)
			}
		}
		if Covers(grant, need) {
			if ok, _ := doublestar.Match(glob, clean); !ok {
				t.Fatalf("grant %q covers %q but does not match it", glob, clean)
			}
		}
		under, err := workspacepath.Clean(clean + "/" + suffix)
		if err != nil || hasMeta(under) || !(under == clean || clean == "." || strings.HasPrefix(under, clean+"/")) {
			return
		}
		tree := Capability{"fs", "read", subtreeOf(clean)}
		if Covers(grant, tree) {
			if ok, _ := doublestar.Match(glob, under); !ok {
				t.Fatalf("grant %q covers subtree %q but not %q under it", glob, tree.Scope, under)
			}
		}
		if ok, _ := doublestar.Match(glob, under); ok && !Denies(grant, tree) {
			t.Fatalf("deny %q matches %q but does not deny the subtree %q", glob, under, tree.Scope)
		}
	})
}

// FuzzHostPort checks the net matcher: "*.example.com:443" covers exactly
// one more DNS label under example.com, on port 443, whatever the input.
func FuzzHostPort(f *testing.F) {
	for _, s := range []string{"api.example.com:443", "a.b.example.com:443", "example.com:443", "evil.com/.example.com:443",
		"API.EXAMPLE.COM:443", "x.example.com:4430", ".example.com:443", "x.example.com.:443", "x.example.com:443:443", "[::1]:443"} {
		f.Add(s)
	}
	grant := Capability{"net", "connect", "*.example.com:443"}
	f.Fuzz(func(t *testing.T, hostPort string) {
		need := Capability{"net", "connect", hostPort}
		if hasMeta(hostPort) || !Covers(grant, need) {
			return
		}
		host, port, _ := cutLast(strings.ToLower(hostPort))
		label, ok := strings.CutSuffix(host, ".example.com")
		if !ok || label == "" || strings.ContainsAny(label, "./") || port != "443" {
			t.Fatalf("%q is covered by %s", hostPort, grant)
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
