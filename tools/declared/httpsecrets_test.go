package declared

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// TestHTTPToolReadsFileAndVaultSecretsEachCall: api_key_file and a
// header_env vault entry are read at each call (a rotated file is
// picked up), sent, scrubbed from echoes and named, never shown, in the
// approval preview.
func TestHTTPToolReadsFileAndVaultSecretsEachCall(t *testing.T) {
	var got, stolen seen
	other := endpoint(t, "", &stolen)
	srv := endpoint(t, other.URL, &got)
	keyFile := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(keyFile, []byte(apiKey+"\n"), 0o600))
	reads := 0
	h := HTTP{Getenv: func(string) string { return "" }, Secret: func(_ context.Context, ref configs.SecretRef) (string, error) {
		if ref.Vault != "" {
			reads++
			require.Equal(t, "secret/data/search#tenant", ref.Vault)
			return "tenant-from-vault", nil
		}
		return configs.SecretSources{}.Secret(context.Background(), ref)
	}}
	d := httpDecl(srv.URL, "/echo")
	d.APIKeyEnv, d.APIKeyFile = "", keyFile
	d.HeaderEnv = []configs.HeaderEnv{{Name: "X-Tenant", Vault: "secret/data/search#tenant"}}
	tool := h.Tool(d)
	require.Zero(t, reads, "building the tool reads no secret")

	res := call(t, tool, map[string]any{"q": "x"})
	require.False(t, res.IsError, resultText(res))
	require.Equal(t, apiKey, got.header.Get("X-Api-Key"))
	require.Equal(t, "tenant-from-vault", got.header.Get("X-Tenant"))
	require.NotContains(t, resultText(res), apiKey)
	require.Contains(t, resultText(res), redacted)

	rotated := "sk-rotated-KEY-9876543210"
	require.NoError(t, os.WriteFile(keyFile, []byte(rotated), 0o600))
	res = call(t, tool, map[string]any{"q": "x"})
	require.Equal(t, rotated, got.header.Get("X-Api-Key"), "the file is read at each call")
	require.NotContains(t, resultText(res), rotated)
	require.Equal(t, 2, reads)

	p, err := previewOf(t, tool, map[string]any{"q": "x"})
	require.NoError(t, err)
	require.Contains(t, p, "X-Api-Key: [secret from file "+keyFile+", not shown]\nX-Tenant: [secret from Vault secret/data/search#tenant, not shown]\n")
	require.NotContains(t, p, rotated)
}

// A key file others may read, or a Vault that refuses, fails the call
// with the credentials rule, naming the key but neither the value nor
// where it is kept.
func TestHTTPToolSecretReadRefused(t *testing.T) {
	var got seen
	srv := endpoint(t, "", &got)
	keyFile := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(keyFile, []byte(apiKey), 0o600))
	require.NoError(t, os.Chmod(keyFile, 0o644))
	d := httpDecl(srv.URL, "/ok")
	d.APIKeyEnv, d.APIKeyFile = "", keyFile
	res := call(t, HTTP{Getenv: getenv}.Tool(d), map[string]any{"q": "x"})
	e := errorOf(t, res)
	require.Equal(t, toolerr.BackendUnavailable, e.Code)
	require.Equal(t, "tools.search_api.credentials", e.Rule)
	require.Contains(t, e.Message, "tool search_api's credential (api_key) could not be read")
	require.NotContains(t, resultText(res), keyFile)
	require.NotContains(t, resultText(res), apiKey)
	require.Nil(t, got.header, "nothing was sent")

	d = httpDecl(srv.URL, "/ok")
	d.HeaderEnv = []configs.HeaderEnv{{Name: "X-Tenant", Vault: "secret/data/search#tenant"}}
	denied := HTTP{Getenv: getenv, Secret: func(context.Context, configs.SecretRef) (string, error) {
		return "", errors.New("reading secret/data/search from Vault: 403 Forbidden")
	}}
	e = errorOf(t, call(t, denied.Tool(d), map[string]any{"q": "x"}))
	require.Equal(t, "tools.search_api.credentials", e.Rule)
	require.Contains(t, e.Message, "credential (header_env[0]) could not be read")
}

// The declaration's checks cover the file and vault keys.
func TestCheckHTTPSecretKeys(t *testing.T) {
	loose := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(loose, []byte("k"), 0o600))
	require.NoError(t, os.Chmod(loose, 0o644))
	for want, edit := range map[string]func(*configs.DeclaredTool){
		"api_key_file: " + loose + " has mode 0644":              func(d *configs.DeclaredTool) { d.APIKeyFile = loose },
		"api_key_file: \"key\" must be an absolute path":         func(d *configs.DeclaredTool) { d.APIKeyFile = "key" },
		"set only one of api_key_file and api_key_vault":         func(d *configs.DeclaredTool) { d.APIKeyFile, d.APIKeyVault = "/k", "secret/data/a#b" },
		"api_key_vault: \"a/b#c\" is not a KV v2 data path":      func(d *configs.DeclaredTool) { d.APIKeyVault = "a/b#c" },
		"header_env[0].file: " + loose + " has mode 0644":        func(d *configs.DeclaredTool) { d.HeaderEnv = []configs.HeaderEnv{{Name: "X-K", File: loose}} },
		"header_env[0].env: is not an environment variable name": func(d *configs.DeclaredTool) { d.HeaderEnv = []configs.HeaderEnv{{Name: "X-K"}} },
	} {
		t.Run(want, func(t *testing.T) {
			d := httpDecl("https://api.example.com", "/s")
			edit(&d)
			var errs []string
			Check(&d, func(key, format string, args ...any) { errs = append(errs, key+": "+fmt.Sprintf(format, args...)) })
			require.Contains(t, strings.Join(errs, "\n"), want)
		})
	}
}
