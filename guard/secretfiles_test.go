package guard

import (
	"testing"

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
