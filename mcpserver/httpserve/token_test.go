package httpserve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/mcpserver/httpserve"
)

// kvServer answers the KV v2 read API as documented, for one token.
func kvServer(t *testing.T, token string, data map[string]string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Vault-Token") != token {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"errors":["permission denied"]}`))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"data": data}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func private(t *testing.T, dir, name, body string, mode os.FileMode) string {
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	require.NoError(t, os.Chmod(p, mode))
	return p
}

// loadHTTP loads a config's http section, its secrets bound as Load binds
// them.
func loadHTTP(t *testing.T, yaml string) configs.HTTP {
	p := filepath.Join(t.TempDir(), "tw.yaml")
	require.NoError(t, os.WriteFile(p, []byte(yaml), 0o600))
	l, err := configs.Load(configs.Options{File: p})
	require.NoError(t, err)
	return l.Config.HTTP
}

// The server token and every identity's come from a variable, a 0600
// file or Vault, through the config's secret resolver.
func TestResolveTokensFromEverySource(t *testing.T) {
	t.Setenv(httpserve.TokenEnv, "")
	t.Setenv("TW_CI_TOKEN", "ci-token-from-the-env-0123")
	dir := t.TempDir()
	vault := kvServer(t, "vault-root-token", map[string]string{"main": "main-token-from-vault-0123", "bot": "bot-token-from-vault-0123"})
	vtok := private(t, dir, "vtok", "vault-root-token\n", 0o600)
	file := private(t, dir, "ops", "ops-token-from-a-file-0123\n", 0o600)
	h := loadHTTP(t, "secrets:\n  vault: {address: "+vault+", token_file: "+vtok+"}\nhttp:\n  token_vault: secret/data/tw#main\n  identities:\n"+
		"    - {name: ci, token_env: TW_CI_TOKEN}\n    - {name: ops, token_file: "+file+"}\n    - {name: bot, token_vault: secret/data/tw#bot}\n")

	tok, generated, err := httpserve.ResolveToken(context.Background(), h)
	require.NoError(t, err)
	require.False(t, generated)
	require.Equal(t, "main-token-from-vault-0123", tok)

	ids, err := httpserve.ResolveIdentities(context.Background(), h)
	require.NoError(t, err)
	require.Equal(t, []httpserve.Identity{{Name: "ci", Token: "ci-token-from-the-env-0123"}, {Name: "ops", Token: "ops-token-from-a-file-0123"},
		{Name: "bot", Token: "bot-token-from-vault-0123"}}, ids)

	t.Setenv(httpserve.TokenEnv, "env-token-wins-0123456789")
	tok, _, err = httpserve.ResolveToken(context.Background(), h)
	require.NoError(t, err)
	require.Equal(t, "env-token-wins-0123456789", tok, "TOOLWARDEN_HTTP_TOKEN overrides the config")
}

// A token file others may read is refused when read, naming the key and
// never the token; so are a short token and a wrong Vault token.
func TestResolveTokenRefusals(t *testing.T) {
	t.Setenv(httpserve.TokenEnv, "")
	dir := t.TempDir()
	file := private(t, dir, "tok", "a-token-that-leaks-0123\n", 0o600)
	h := loadHTTP(t, "http:\n  token_file: "+file+"\n  identities: [{name: ops, token_file: "+file+"}]\n")
	require.NoError(t, os.Chmod(file, 0o644)) // loosened after the config was checked
	_, _, err := httpserve.ResolveToken(context.Background(), h)
	require.ErrorContains(t, err, "http.token_file: "+file+" has mode 0644: a secret file must be 0600 or stricter")
	_, err = httpserve.ResolveIdentities(context.Background(), h)
	require.ErrorContains(t, err, "http.identities ops: http.identities[0].token_file: "+file+" has mode 0644")
	require.NotContains(t, err.Error(), "a-token-that-leaks")

	require.NoError(t, os.WriteFile(file, []byte("short"), 0o600))
	require.NoError(t, os.Chmod(file, 0o600))
	_, _, err = httpserve.ResolveToken(context.Background(), h)
	require.ErrorContains(t, err, "http.token_file ("+file+"): the bearer token must be at least 16 characters")
	require.NotContains(t, err.Error(), "short:")

	vault := kvServer(t, "right", map[string]string{"main": "main-token-from-vault-0123"})
	h = loadHTTP(t, "secrets:\n  vault: {address: "+vault+", token_file: "+private(t, dir, "vtok", "wrong", 0o600)+"}\nhttp:\n  token_vault: secret/data/tw#main\n")
	_, _, err = httpserve.ResolveToken(context.Background(), h)
	require.ErrorContains(t, err, "http.token_vault: reading secret/data/tw from Vault: 403")
}
