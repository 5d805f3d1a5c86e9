package configs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Widening the argument scan is logged in plain words.
func TestArgumentWideningsWorded(t *testing.T) {
	isolate(t)
	t.Setenv("TOOLWARDEN_ARGUMENTS_SECRETS", "allow")
	t.Setenv("TOOLWARDEN_ARGUMENTS_MARKERS", "allow")
	l, err := Load(Options{})
	require.NoError(t, err)
	require.Contains(t, l.Widenings, "arguments.secrets is allow: what the argument scan finds is no longer refused (from env TOOLWARDEN_ARGUMENTS_SECRETS)")
	require.Contains(t, l.Widenings, "arguments.markers is allow: what the argument scan finds is no longer flagged (from env TOOLWARDEN_ARGUMENTS_MARKERS)")
}
