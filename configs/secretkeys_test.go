package configs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The HTTP tokens and the Gemini API key take _file and _vault beside
// _env, with the same rules as every other secret key.
func TestValidateSecretKeysOfTokensAndAPIKey(t *testing.T) {
	loose := writeMode(t, "tok", "token-0123456789abcdef\n", 0o644)
	tight := writeMode(t, "tok", "token-0123456789abcdef\n", 0o600)
	tests := map[string]string{
		"http:\n  token_file: " + loose + "\n":                                         "http.token_file: " + loose + " has mode 0644",
		"http:\n  token_vault: secret/data/tw#token\n":                                 "secrets.vault.address: must be set",
		"http:\n  token_file: " + tight + "\n  token_vault: secret/data/tw#token\n":    "set only one of http.token_file and http.token_vault",
		"http:\n  identities: [{name: ci, token_file: " + loose + "}]\n":               "http.identities[0].token_file: " + loose + " has mode 0644",
		"http:\n  identities: [{name: ci, token_file: tok}]\n":                         "http.identities[0].token_file: \"tok\" must be an absolute path",
		"http:\n  identities: [{name: ci, token_vault: 'secret/x#y'}]\n":               "http.identities[0].token_vault: \"secret/x#y\" is not a KV v2 data path",
		"http:\n  identities: [{name: ci, token_env: X, token_file: " + tight + "}]\n": "http.identities[0]: set exactly one of token_env, token_file and token_vault",
		"http:\n  identities: [{name: ci, token_env: 'not a name'}]\n":                 "http.identities[0].token_env: is not an environment variable name",
		"bridge:\n  api_key_file: " + loose + "\n":                                     "bridge.api_key_file: " + loose + " has mode 0644",
		"bridge:\n  api_key_vault: secret/data/gemini#key\n":                           "secrets.vault.address: must be set",
		"bridge:\n  api_key_env: AIzaSyNotAName-123\n":                                 "bridge.api_key_env: is not an environment variable name",
	}
	for yaml, want := range tests {
		t.Run(want, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "toolwarden.yaml")
			require.NoError(t, os.WriteFile(p, []byte(yaml), 0o600))
			_, err := Load(Options{File: p})
			require.ErrorContains(t, err, want)
			require.NotContains(t, err.Error(), "AIzaSyNotAName-123", "an error never echoes what may be the key")
		})
	}
}

func TestSecretRefKeys(t *testing.T) {
	id := HTTPIdentity{Name: "ci", TokenVault: "secret/data/tw#ci"}
	require.Equal(t, "http.identities[2].token_vault (secret/data/tw#ci)", id.TokenRef(2).String())
	h := HeaderEnv{Name: "X-Key", File: "/run/k"}
	require.Equal(t, "header_env[1].file (/run/k)", h.Ref(1).String())
	require.Equal(t, "bridge.api_key_env (GEMINI_KEY)", Bridge{APIKeyEnv: "GEMINI_KEY"}.APIKeyRef().String())

	_, err := NewSecretResolver(Secrets{}).Value(context.Background(), h.Ref(1))
	require.ErrorContains(t, err, "header_env[1].file: open /run/k")

	var errs []string
	add := func(key, format string, args ...any) { errs = append(errs, key) }
	require.True(t, CheckSecretRef(add, HeaderEnv{Vault: "secret/data/a#b", File: "/x"}.Ref(0)))
	require.Equal(t, []string{"header_env[0].file"}, errs)
}
