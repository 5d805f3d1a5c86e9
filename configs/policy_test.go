package configs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

func loadYAML(t *testing.T, yaml string, opts Options) (*Loaded, error) {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	for _, k := range []string{"TOOLWARDEN_CONFIG", "TOOLWARDEN_POLICY_ALLOW", "TOOLWARDEN_WORKSPACE"} {
		t.Setenv(k, "")
	}
	if yaml != "" {
		opts.File = filepath.Join(dir, "tw.yaml")
		require.NoError(t, os.WriteFile(opts.File, []byte(yaml), 0o600))
	}
	return Load(opts)
}

func TestCapabilitiesDefaultsFileAndFlags(t *testing.T) {
	l, err := loadYAML(t, "", Options{})
	require.NoError(t, err)
	require.Contains(t, l.Config.Capabilities.Grant, "fs:read:**")
	require.Empty(t, l.Config.Capabilities.Deny)
	for _, w := range l.Widenings {
		require.NotContains(t, w, "capabilities", "the built-in grants are no widening")
	}

	// A file's list replaces the built-in one (narrowing); flags add.
	l, err = loadYAML(t, "capabilities:\n  grant: [\"fs:read:src/**\"]\n  deny: [\"fs:read:src/secret/**\"]\n",
		Options{Flags: grantFlags(t, "--grant", "net:connect:api.example.com:443", "--revoke", "fs:read:**/*.pem")})
	require.NoError(t, err)
	require.Equal(t, []string{"fs:read:src/**", "net:connect:api.example.com:443"}, l.Config.Capabilities.Grant)
	require.Equal(t, []string{"fs:read:src/secret/**", "fs:read:**/*.pem"}, l.Config.Capabilities.Deny)
	require.Contains(t, l.Widenings, `capabilities.grant adds "net:connect:api.example.com:443" (from flag --grant)`)
	require.Contains(t, l.Widenings, `capabilities.grant adds "fs:read:src/**" (from `+l.File+`)`)
}

func TestPolicyConfigErrorsNameTheKey(t *testing.T) {
	cases := map[string]string{
		"capabilities:\n  grant: [\"disk:read:x\"]\n":             `capabilities.grant: capability "disk:read:x": unknown resource`,
		"capabilities:\n  deny: [\"fs:read\"]\n":                  `capabilities.deny: capability "fs:read" is not resource:verb:scope`,
		"capabilities:\n  grant: [\"net:connect:example.com\"]\n": "host:port",
		"limits:\n  budget: -1\n":                                 "limits.budget: must not be negative",
		"limits:\n  rate_per_minute: -0.5\n":                      "limits.rate_per_minute: must not be negative",
		"limits:\n  tools:\n    run_*:\n      max_calls: -2\n":    "limits.tools.run_*.max_calls: must not be negative",
		"limits:\n  tools:\n    run_*:\n      bogus: 1\n":         "bogus",
		"policy:\n  require_trust: [\"[\"]\n":                     "policy.require_trust",
		"policy:\n  private_tools: [\"[\"]\n":                     "policy.private_tools",
		"http:\n  identities: [{name: ci}]\n":                     "set exactly one of token_env, token_file and token_vault",
		"http:\n  identities: [{name: local, token_env: X}]\n":    "http.identities[0].name",
	}
	for yaml, want := range cases {
		t.Run(want, func(t *testing.T) {
			_, err := loadYAML(t, yaml, Options{})
			require.Error(t, err)
			require.Contains(t, err.Error(), want)
		})
	}
	_, err := loadYAML(t, "", Options{Flags: grantFlags(t, "--grant", "fs:read:[")})
	require.ErrorContains(t, err, "capabilities.grant")
}

func TestPerToolLimitsDecode(t *testing.T) {
	l, err := loadYAML(t, "limits:\n  rate_per_minute: 30\n  budget: 100\n  tools:\n    run_*: {max_calls: 5, rate_per_minute: 2, cost: 7}\n", Options{})
	require.NoError(t, err)
	require.Equal(t, 30.0, l.Config.Limits.RatePerMinute)
	require.Equal(t, int64(100), l.Config.Limits.Budget)
	require.Equal(t, ToolLimits{MaxCalls: 5, RatePerMinute: 2, Cost: 7}, l.Config.Limits.Tools["run_*"])
}

// grantFlags is a flag set with --grant and --revoke, parsed from args.
func grantFlags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.StringArray("grant", nil, "")
	fs.StringArray("revoke", nil, "")
	require.NoError(t, fs.Parse(args))
	return fs
}
