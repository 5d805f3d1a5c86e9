package guard

import (
	"testing"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/stretchr/testify/require"
)

var testSecrets = []string{"**/.env", "**/.env.local", "**/*.pem", "**/.git/config", "**/.aws/credentials", "**/.ssh/**"}

func secretPolicy(t *testing.T) Policy {
	t.Helper()
	policy, err := NewPolicy([]string{"*"}, nil)
	require.NoError(t, err)
	policy, err = policy.WithCapabilities([]string{"fs:read:**", "fs:write:**"}, nil)
	require.NoError(t, err)
	policy, err = policy.WithSecretFiles(testSecrets)
	require.NoError(t, err)
	return policy
}

func TestSecretFilesDenied(t *testing.T) {
	policy := secretPolicy(t)
	read := &ToolInfo{Name: "read_file", Capabilities: []string{"fs:read:{path}"}, PathArgs: []string{"path"}}
	walk := &ToolInfo{Name: "grep_files", Capabilities: []string{"fs:read:{path}/**"}, PathArgs: []string{"path"}}
	write := &ToolInfo{Name: "write_file", Capabilities: []string{"fs:write:{path}"}, PathArgs: []string{"path"}}
	tests := []struct {
		tool     *ToolInfo
		path     string
		wantRule string // "" allowed
	}{
		{read, ".env", `capabilities.secret_files:"**/.env"`},
		{read, "app/.env", `capabilities.secret_files:"**/.env"`},
		{read, "app/../.env", `capabilities.secret_files:"**/.env"`},
		{read, ".env.local", `capabilities.secret_files:"**/.env.local"`},
		{read, "certs/server.pem", `capabilities.secret_files:"**/*.pem"`},
		{read, ".git/config", `capabilities.secret_files:"**/.git/config"`},
		{read, "home/.aws/credentials", `capabilities.secret_files:"**/.aws/credentials"`},
		{read, ".ssh/known_hosts", `capabilities.secret_files:"**/.ssh/**"`},
		{write, ".env", `capabilities.secret_files:"**/.env"`},
		{walk, ".env", `capabilities.secret_files:"**/.env"`},
		{walk, ".ssh", `capabilities.secret_files:"**/.ssh/**"`},
		{read, ".env.example", ""},
		{read, "env", ""},
		{read, "docs/pem.md", ""},
		{read, ".gitconfig.md", ""},
		{walk, ".", ""},
		{walk, "app", ""},
	}
	v := newTestValidator(t, "read_file", "grep_files", "write_file")
	for _, tt := range tests {
		t.Run(tt.tool.Name+" "+tt.path, func(t *testing.T) {
			call := Call{Tool: tt.tool.Name, Args: map[string]any{"path": tt.path}}
			d := Decide(call, tt.tool, policy, Limits{MaxCalls: 10, MaxOutputBytes: 1 << 20}, State{}, v)
			if tt.wantRule == "" {
				require.Equal(t, Allow, d.Outcome, "%v", d)
				return
			}
			require.Equal(t, Deny, d.Outcome, "%v", d)
			require.Equal(t, tt.wantRule, d.Rule)
			require.Equal(t, "denied.capability", string(d.Err.Code))
			require.Contains(t, d.Err.Hint, "capabilities.allow_secret_files")
		})
	}
}

func TestSecretFilesThroughLinks(t *testing.T) {
	policy := secretPolicy(t).WithPathResolver(func(p string) (string, bool) {
		if p == "notes.txt" {
			return ".env", true
		}
		return p, true
	})
	read := &ToolInfo{Name: "read_file", Capabilities: []string{"fs:read:{path}"}, PathArgs: []string{"path"}}
	call := Call{Tool: "read_file", Args: map[string]any{"path": "notes.txt"}}
	d := Decide(call, read, policy, Limits{MaxCalls: 10, MaxOutputBytes: 1 << 20}, State{}, newTestValidator(t, "read_file"))
	require.Equal(t, Deny, d.Outcome, "a link to .env is .env")
	require.Equal(t, `capabilities.secret_files:"**/.env"`, d.Rule)
}

func TestWithSecretFilesRefusesBadGlob(t *testing.T) {
	_, err := Policy{}.WithSecretFiles([]string{"[a"})
	require.Error(t, err)
}

// defaultSecrets is configs/default.yaml's capabilities.secret_files
// (the first 30) with a few harder forms.
var defaultSecrets = []string{
	"**/.env", "**/.env.local", "**/.env.*.local", "**/.env.{dev,development,prod,production,stage,staging,test,testing,ci}",
	"**/*.pem", "**/*.key", "**/*.p12", "**/*.pfx", "**/*.jks", "**/*.keystore", "**/id_rsa*", "**/id_dsa*",
	"**/id_ecdsa*", "**/id_ed25519*", "**/.ssh/**", "**/.git/config", "**/.git-credentials", "**/*.kdbx",
	"**/.aws/credentials", "**/.aws/config", "**/.azure/**", "**/.config/gcloud/**", "**/application_default_credentials.json",
	"**/.kube/config", "**/.docker/config.json", "**/.netrc", "**/_netrc", "**/.npmrc", "**/.pypirc", "**/.pgpass",
	"secrets/*", "a{b,{c,d}}e/x?y*z", "**/[ab].txt", `**/\*.lit`, "{x,y}/**/k{1,2}", "**", "*",
}

func TestLiteralOf(t *testing.T) {
	for glob, want := range map[string]string{
		"**/.env": ".env", "**/*.pem": ".pem", "**/.ssh/**": ".ssh", "**/.config/gcloud/**": ".config",
		"**/.env.{dev,prod}": ".env.", "**/id_rsa*": "id_rsa", "a{b,{c,d}}e/x?y*z": "a", "**/[ab].txt": "",
		`**/\*.lit`: "", "**": "", "{x,y}/**/k{1,2}": "k", "a{b": "", "a}b": "",
	} {
		require.Equal(t, want, literalOf(glob), glob)
	}
}

// FuzzSecretFileGlob holds the literal pre-filter to the glob matcher:
// secretFileGlob names the glob the matcher alone names first, for any
// path.
func FuzzSecretFileGlob(f *testing.F) {
	for _, p := range []string{".env", "a/.env.prod", "x/id_rsa.pub", ".ssh", "home/.ssh/k", "a/.config/gcloud/c.json",
		"secrets/x", "ace/xqyz", "adde/xay", "b.txt", "*.lit", "y/q/k2", ".", "docs/pem.md"} {
		f.Add(p)
	}
	p, err := Policy{}.WithSecretFiles(defaultSecrets)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, path string) {
		want, wantOK := "", false
		for _, g := range defaultSecrets {
			if doublestar.MatchUnvalidated(g, path) {
				want, wantOK = g, true
				break
			}
		}
		got, ok := secretFileGlob(p.secrets, path)
		if got != want || ok != wantOK {
			t.Fatalf("secretFileGlob(%q) = %q %v, the matcher alone: %q %v", path, got, ok, want, wantOK)
		}
	})
}

func BenchmarkSecretFileGlob(b *testing.B) {
	p, err := Policy{}.WithSecretFiles(defaultSecrets[:30])
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := secretFileGlob(p.secrets, "src/pkg/main.go"); ok {
			b.Fatal("matched")
		}
	}
}
