package capability

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func mustCap(t testing.TB, s string) Capability {
	t.Helper()
	c, err := Parse(s)
	require.NoError(t, err)
	return c
}

func TestParse(t *testing.T) {
	c := mustCap(t, "net:connect:api.example.com:443")
	require.Equal(t, Capability{"net", "connect", "api.example.com:443"}, c)
	require.Equal(t, "net:connect:api.example.com:443", c.String())
	for _, bad := range []string{"", "fs", "fs:read", "fs:read:", ":read:x", "fs::x", "disk:read:x", "fs:read:[", "net:connect:example.com"} {
		_, err := Parse(bad)
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
		if HasGlob(hostPort) || !Covers(grant, need) {
			return
		}
		host, port, _ := cutLast(strings.ToLower(hostPort))
		label, ok := strings.CutSuffix(host, ".example.com")
		if !ok || label == "" || strings.ContainsAny(label, "./") || port != "443" {
			t.Fatalf("%q is covered by %s", hostPort, grant)
		}
	})
}
