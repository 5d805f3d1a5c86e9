package configs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSecretFilesDefault(t *testing.T) {
	isolate(t)
	l, err := Load(Options{})
	require.NoError(t, err)
	globs := l.Config.Capabilities.SecretGlobs()
	require.Contains(t, globs, "**/.env")
	require.Contains(t, globs, "**/*.pem")
	require.Contains(t, globs, "**/.git/config")
	require.Empty(t, l.Widenings)
}

func TestSecretFilesLiftingIsAWidening(t *testing.T) {
	isolate(t)
	writeFile(t, "file.yaml", "capabilities:\n  allow_secret_files: true\n")
	l, err := Load(Options{File: "file.yaml"})
	require.NoError(t, err)
	require.Empty(t, l.Config.Capabilities.SecretGlobs())
	require.Len(t, l.Widenings, 1)
	require.Contains(t, l.Widenings[0], "capabilities.allow_secret_files lifts the denial of secret files")
	require.Contains(t, l.Widenings[0], "(from file.yaml)")

	writeFile(t, "file.yaml", "capabilities:\n  secret_files: ['**/.env', '**/*.pem']\n")
	l, err = Load(Options{File: "file.yaml"})
	require.NoError(t, err)
	require.Equal(t, []string{"**/.env", "**/*.pem"}, l.Config.Capabilities.SecretGlobs())
	require.Contains(t, l.Widenings, `capabilities.secret_files no longer denies "**/.git/config" (from file.yaml)`)
	require.NotContains(t, l.Widenings, `capabilities.secret_files no longer denies "**/.env" (from file.yaml)`)
}

func TestSecretFilesBadGlob(t *testing.T) {
	isolate(t)
	writeFile(t, "file.yaml", "capabilities:\n  secret_files: ['[a']\n")
	_, err := Load(Options{File: "file.yaml"})
	require.ErrorContains(t, err, "capabilities.secret_files")
}
