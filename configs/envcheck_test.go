package configs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMisspeltEnvIsWarnedAbout: a TOOLWARDEN_* variable that sets no key
// is not silently ignored (an unknown key in a file is an error): Load
// warns, naming the nearest variable that would have set a key.
func TestMisspeltEnvIsWarnedAbout(t *testing.T) {
	isolate(t)
	t.Setenv("TOOLWARDEN_LIMITS_CALL_TIMOUT", "10s")
	t.Setenv("TOOLWARDEN_POLICY_DENYY", "write_file")
	t.Setenv("TOOLWARDEN_FOO", "1")
	l, err := Load(Options{})
	require.NoError(t, err)
	require.Equal(t, []string{
		"env TOOLWARDEN_FOO sets no config key and is ignored",
		"env TOOLWARDEN_LIMITS_CALL_TIMOUT sets no config key and is ignored (did you mean TOOLWARDEN_LIMITS_CALL_TIMEOUT?)",
		"env TOOLWARDEN_POLICY_DENYY sets no config key and is ignored (did you mean TOOLWARDEN_POLICY_DENY?)",
	}, l.Warnings)
	require.NotContains(t, l.Config.Policy.Deny, "write_file")
}

// TestKnownEnvIsNotWarnedAbout: keys, the variables toolwarden reads
// besides keys, variables the config names as holding secrets, and the
// test suite's own variables draw no warning.
func TestKnownEnvIsNotWarnedAbout(t *testing.T) {
	isolate(t)
	writeFile(t, "file.yaml", "cluster:\n  secret_env: TOOLWARDEN_MY_FLEET_SECRET\n")
	for k, v := range map[string]string{"TOOLWARDEN_LIMITS_CALL_TIMEOUT": "10s", "TOOLWARDEN_CONFIG": "file.yaml",
		"TOOLWARDEN_HTTP_TOKEN": "x", "TOOLWARDEN_SERVER_TOKEN": "x", "TOOLWARDEN_MY_FLEET_SECRET": "x",
		"TOOLWARDEN_TEST_PYTHON": "x", "TOOLWARDEN_APPROVAL_CHANNEL": "elicit"} {
		t.Setenv(k, v)
	}
	l, err := Load(Options{})
	require.NoError(t, err)
	require.Empty(t, l.Warnings)
}

func TestNearestNeedsACloseName(t *testing.T) {
	known := []string{"TOOLWARDEN_TOOLS", "TOOLWARDEN_LOG_LEVEL", "TOOLWARDEN_LOG_LEVELS"}
	require.Empty(t, nearest("TOOLWARDEN_FOO", known), "three edits of a three-letter name is another name")
	require.Equal(t, "TOOLWARDEN_LOG_LEVEL", nearest("TOOLWARDEN_LOG_LEVL", known))
	require.Equal(t, "TOOLWARDEN_LOG_LEVEL", nearest("TOOLWARDEN_LOG_LEVELX", known), "a tie goes to the first name in sort order")
}

// TestApprovalPageOption: --approval-page adds the page channel in Load,
// so every command (config check as serve) sees the same channels, and
// says where it came from.
func TestApprovalPageOption(t *testing.T) {
	isolate(t)
	l, err := Load(Options{ApprovalPage: true})
	require.NoError(t, err)
	require.Equal(t, "page", l.Config.Approval.Channel[len(l.Config.Approval.Channel)-1])
	require.Equal(t, "flag --approval-page", l.Origin("approval.channel"))
	n := len(l.Config.Approval.Channel)

	writeFile(t, "file.yaml", "approval:\n  channel: [page, elicit]\n")
	l, err = Load(Options{File: "file.yaml", ApprovalPage: true})
	require.NoError(t, err)
	require.Equal(t, []string{"page", "elicit"}, l.Config.Approval.Channel, "listed already: not added twice")
	require.Positive(t, n)
}
