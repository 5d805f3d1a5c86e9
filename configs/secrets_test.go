package configs

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

func writeMode(t *testing.T, name, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	require.NoError(t, os.Chmod(p, mode))
	return p
}

func TestReadSecretFile(t *testing.T) {
	tests := []struct {
		name, body string
		mode       os.FileMode
		want, err  string
	}{
		{name: "0600 read, trimmed", body: "s3cret\n", mode: 0o600, want: "s3cret"},
		{name: "0400 read", body: "s3cret", mode: 0o400, want: "s3cret"},
		{name: "0644 refused", body: "s3cret", mode: 0o644, err: "has mode 0644: a secret file must be 0600 or stricter"},
		{name: "0640 refused", body: "s3cret", mode: 0o640, err: "has mode 0640"},
		{name: "0602 refused", body: "s3cret", mode: 0o602, err: "has mode 0602"},
		{name: "empty refused", body: " \n", mode: 0o600, err: "is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadSecretFile(writeMode(t, "s", tt.body, tt.mode))
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				require.NotContains(t, err.Error(), "s3cret", "the error holds the value")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
	_, err := ReadSecretFile(t.TempDir())
	require.ErrorContains(t, err, "not a regular file")
}

func TestSecretResolverSources(t *testing.T) {
	ctx := context.Background()
	dotenv := writeMode(t, ".env", "# comment\nexport DB_PASSWORD='from-dotenv'\nAPI_KEY=from-dotenv-too\n", 0o600)
	r := NewSecretResolver(Secrets{Dotenv: dotenv})
	env := map[string]string{"API_KEY": "from-env"}
	r.getenv = func(k string) string { return env[k] }

	v, err := r.Value(ctx, SecretRef{Key: "graph.password", Env: "DB_PASSWORD"})
	require.NoError(t, err)
	require.Equal(t, "from-dotenv", v)
	require.Equal(t, "from-env", r.Getenv("API_KEY"), "the process environment wins over .env")
	require.Equal(t, "from-dotenv", r.Getenv("DB_PASSWORD"))

	v, err = r.Value(ctx, SecretRef{Key: "graph.password", File: writeMode(t, "pw", "from-file\n", 0o600)})
	require.NoError(t, err)
	require.Equal(t, "from-file", v)

	_, err = r.Value(ctx, SecretRef{Key: "graph.password", File: writeMode(t, "pw", "from-file\n", 0o644)})
	require.ErrorContains(t, err, "graph.password_file: ")
	require.ErrorContains(t, err, "mode 0644")
}

// A .env file others may read is refused, naming the key; nothing of it
// is read.
func TestDotenvModeRefused(t *testing.T) {
	r := NewSecretResolver(Secrets{Dotenv: writeMode(t, ".env", "DB_PASSWORD=leaky\n", 0o644)})
	r.getenv = func(string) string { return "" }
	_, err := r.Value(context.Background(), SecretRef{Key: "graph.password", Env: "DB_PASSWORD"})
	require.ErrorContains(t, err, "graph.password_env: secrets.dotenv: ")
	require.ErrorContains(t, err, "has mode 0644")
	require.NotContains(t, err.Error(), "leaky")
	require.Empty(t, r.Getenv("DB_PASSWORD"))
}

// kvServer answers the KV v2 read API as Vault and OpenBao document it
// (GET /v1/<mount>/data/<path>, X-Vault-Token, X-Vault-Namespace).
func kvServer(t *testing.T, token, namespace string, secrets map[string]map[string]any) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodGet || r.Header.Get("X-Vault-Token") != token || r.Header.Get("X-Vault-Namespace") != namespace {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"errors":["permission denied"]}`))
			return
		}
		data, ok := secrets[strings.TrimPrefix(r.URL.Path, "/v1/")]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"errors":[]}`))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"request_id": "0e6e5a1b", "lease_id": "", "renewable": false, "lease_duration": 0,
			"data": map[string]any{"data": data, "metadata": map[string]any{
				"created_time": "2018-03-22T02:24:06.945319214Z", "custom_metadata": nil, "deletion_time": "", "destroyed": false, "version": 2}},
			"wrap_info": nil, "warnings": nil, "auth": nil,
		})
	}))
	t.Cleanup(s.Close)
	return s
}

func TestVaultKV(t *testing.T) {
	const token = "hvs.test-token-never-logged"
	srv := kvServer(t, token, "team-a", map[string]map[string]any{"secret/data/app": {"token": "kv-value", "n": 3}})
	tokenFile := writeMode(t, "token", token+"\n", 0o600)
	r := NewSecretResolver(Secrets{Vault: Vault{Address: srv.URL, TokenFile: tokenFile, Namespace: "team-a"}})
	ctx := context.Background()
	v, err := r.Value(ctx, SecretRef{Key: "graph.password", Vault: "secret/data/app#token"})
	require.NoError(t, err)
	require.Equal(t, "kv-value", v)

	for ref, want := range map[string]string{
		"secret/data/app#missing": `has no string field "missing"`,
		"secret/data/app#n":       `has no string field "n"`,
		"secret/data/other#token": "404 Not Found",
		"secret/app#token":        "not a KV v2 data path",
		"secret/data/../x#token":  "not a plain secret path",
		"secret/data/app":         "is not mount/data/path#field",
	} {
		_, err := r.Value(ctx, SecretRef{Key: "graph.password", Vault: ref})
		require.ErrorContains(t, err, "graph.password_vault: ", ref)
		require.ErrorContains(t, err, want, ref)
		require.NotContains(t, err.Error(), token)
	}

	bad := NewSecretResolver(Secrets{Vault: Vault{Address: srv.URL, TokenFile: writeMode(t, "token", "wrong", 0o600), Namespace: "team-a"}})
	_, err = bad.Value(ctx, SecretRef{Key: "graph.password", Vault: "secret/data/app#token"})
	require.ErrorContains(t, err, "403 Forbidden permission denied")

	loose := NewSecretResolver(Secrets{Vault: Vault{Address: srv.URL, TokenFile: writeMode(t, "token", token, 0o644)}})
	_, err = loose.Value(ctx, SecretRef{Key: "graph.password", Vault: "secret/data/app#token"})
	require.ErrorContains(t, err, "secrets.vault.token_file: ")
	require.ErrorContains(t, err, "mode 0644")
}

// TestVaultKVOpenBao reads a secret from a real dev-mode OpenBao.
func TestVaultKVOpenBao(t *testing.T) {
	b := testenv.StartOpenBao(t)
	b.Put(t, "secret/data/toolwarden", map[string]string{"password": "from-openbao"})
	r := NewSecretResolver(Secrets{Vault: Vault{Address: b.Address, TokenFile: writeMode(t, "token", b.RootToken, 0o600)}})
	v, err := r.Value(context.Background(), SecretRef{Key: "graph.password", Vault: "secret/data/toolwarden#password"})
	require.NoError(t, err)
	require.Equal(t, "from-openbao", v)
	_, err = r.Value(context.Background(), SecretRef{Key: "graph.password", Vault: "secret/data/nothing#password"})
	require.ErrorContains(t, err, "404")
}

// The config names each key whose secret file is too open, and refuses
// relative paths and ambiguous sources.
func TestValidateSecrets(t *testing.T) {
	loose := writeMode(t, ".env", "X=1\n", 0o644)
	tight := writeMode(t, "pw", "x\n", 0o600)
	tests := map[string]string{
		"secrets:\n  dotenv: " + loose + "\n":                                         "secrets.dotenv: " + loose + " has mode 0644",
		"secrets:\n  dotenv: .env\n":                                                  "secrets.dotenv: \".env\" must be an absolute path",
		"graph:\n  password_file: " + loose + "\n":                                    "graph.password_file: " + loose + " has mode 0644",
		"graph:\n  password_vault: secret/data/x#y\n  password_file: " + tight + "\n": "set only one of graph.password_file and graph.password_vault",
		"graph:\n  password_vault: secret/data/x#y\n":                                 "secrets.vault.address: must be set",
		"graph:\n  password_vault: secret/x#y\n":                                      "graph.password_vault: \"secret/x#y\" is not a KV v2 data path",
		"secrets:\n  vault: {address: http://vault.example:8200, token_env: T}\n":     "must be https (http only on a loopback host)",
		"secrets:\n  vault: {address: https://vault.example}\n":                       "set exactly one of secrets.vault.token_env and secrets.vault.token_file",
	}
	for yaml, want := range tests {
		t.Run(want, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "toolwarden.yaml")
			require.NoError(t, os.WriteFile(p, []byte(yaml), 0o600))
			_, err := Load(Options{File: p})
			require.ErrorContains(t, err, want)
		})
	}
	p := filepath.Join(t.TempDir(), "toolwarden.yaml")
	require.NoError(t, os.WriteFile(p, []byte("secrets:\n  dotenv: "+writeMode(t, ".env", "X=1\n", 0o600)+"\n"), 0o600))
	_, err := Load(Options{File: p})
	require.NoError(t, err)
}
