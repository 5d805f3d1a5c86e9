package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGenerateKeyFilesWritesAPairOnce(t *testing.T) {
	dir := t.TempDir()
	keyPath, pubPath, id, err := GenerateKeyFiles(dir)
	require.NoError(t, err)
	for p, mode := range map[string]os.FileMode{keyPath: 0o600, pubPath: 0o644} {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		require.Equal(t, mode, fi.Mode().Perm(), p)
	}
	s, err := LoadSigningKey(keyPath)
	require.NoError(t, err)
	keys, err := LoadPublicKeys([]string{pubPath})
	require.NoError(t, err)
	require.Equal(t, id, s.KeyID())
	require.Contains(t, keys, id)

	before, err := os.ReadFile(keyPath)
	require.NoError(t, err)
	_, _, _, err = GenerateKeyFiles(dir)
	require.ErrorContains(t, err, "exists; keygen never overwrites a key")
	after, err := os.ReadFile(keyPath)
	require.NoError(t, err)
	require.Equal(t, before, after)

	require.NoError(t, os.Remove(keyPath)) // one of the two left: still refused
	_, _, _, err = GenerateKeyFiles(dir)
	require.ErrorContains(t, err, PublicKeyFile+" exists")
	require.NoFileExists(t, keyPath)
}

// TestLoadSigningKeyRefuses is the table of key files a server must not
// start with.
func TestLoadSigningKeyRefuses(t *testing.T) {
	dir := t.TempDir()
	keyPath, pubPath, _, err := GenerateKeyFiles(dir)
	require.NoError(t, err)
	keyPEM, err := os.ReadFile(keyPath)
	require.NoError(t, err)
	rsaLike := strings.Replace(string(keyPEM), "PRIVATE KEY", "RSA PRIVATE KEY", 2)
	for _, tc := range []struct {
		name string
		data string
		mode os.FileMode
		want string
	}{
		{"readable by the group", string(keyPEM), 0o640, "is mode 0640: a signing key must be 0600 or stricter"},
		{"readable by all", string(keyPEM), 0o644, "is mode 0644"},
		{"writable by others", string(keyPEM), 0o602, "is mode 0602"},
		{"the public key", mustRead(t, pubPath), 0o600, `not a PEM "PRIVATE KEY" (PKCS#8) block`},
		{"another PEM type", rsaLike, 0o600, `not a PEM "PRIVATE KEY"`},
		{"no PEM", "hello", 0o600, "not a PEM"},
		{"too large", strings.Repeat("x", 70<<10), 0o600, "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "k")
			require.NoError(t, os.WriteFile(p, []byte(tc.data), tc.mode))
			require.NoError(t, os.Chmod(p, tc.mode))
			_, err := LoadSigningKey(p)
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, p, "the error names the file")
		})
	}
	_, err = LoadSigningKey(dir)
	require.ErrorContains(t, err, "not a regular file")
	require.NoError(t, os.Chmod(keyPath, 0o400))
	_, err = LoadSigningKey(keyPath)
	require.NoError(t, err, "stricter than 0600 is fine")
}

func TestLoadPublicKeysRefusesAPrivateKey(t *testing.T) {
	keyPath, pubPath, _, err := GenerateKeyFiles(t.TempDir())
	require.NoError(t, err)
	_, err = LoadPublicKeys([]string{keyPath})
	require.ErrorContains(t, err, `not "PUBLIC KEY" (give the .pub file, never the private key)`)
	empty := filepath.Join(t.TempDir(), "empty.pub")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	_, err = LoadPublicKeys([]string{pubPath, empty})
	require.ErrorContains(t, err, "no PEM \"PUBLIC KEY\" block")
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}
