package configs

// Attack tests of the secrets resolver: what a hostile file system or
// Vault server does to make it hang, read a file it should refuse, or
// print the token.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// within runs f and fails if it has not returned in a generous bound:
// a secret read must never block on what the path names.
func within(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("the read blocked")
		return nil
	}
}

// A FIFO or a device as a secret file or secrets.dotenv is refused at
// once; opening a FIFO for reading would wait for a writer forever.
func TestAttackSecretFileNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	t.Cleanup(func() {
		// Unblock a reader the test may have left waiting.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	for _, p := range []string{fifo, "/dev/zero", "/dev/null"} {
		t.Run(p, func(t *testing.T) {
			err := within(t, func() error { _, err := ReadSecretFile(p); return err })
			require.ErrorContains(t, err, "is not a regular file")

			r := NewSecretResolver(Secrets{Dotenv: p})
			r.getenv = func(string) string { return "" }
			err = within(t, func() error {
				_, err := r.Value(context.Background(), SecretRef{Key: "graph.password", Env: "DB_PASSWORD"})
				return err
			})
			require.ErrorContains(t, err, "secrets.dotenv: ")
			require.ErrorContains(t, err, "is not a regular file")
		})
	}
}

// The mode checked is the mode of the file read (through its
// descriptor): a symlink to a file others may read is refused, a
// symlink to a private file is read.
func TestAttackSecretFileSymlink(t *testing.T) {
	dir := t.TempDir()
	open := writeMode(t, "open", "leaky", 0o644)
	private := writeMode(t, "private", "s3cret", 0o600)
	require.NoError(t, os.Symlink(open, filepath.Join(dir, "to-open")))
	require.NoError(t, os.Symlink(private, filepath.Join(dir, "to-private")))
	_, err := ReadSecretFile(filepath.Join(dir, "to-open"))
	require.ErrorContains(t, err, "has mode 0644")
	require.NotContains(t, err.Error(), "leaky")
	v, err := ReadSecretFile(filepath.Join(dir, "to-private"))
	require.NoError(t, err)
	require.Equal(t, "s3cret", v)
}

// A Vault server redirecting the read elsewhere is not followed (the
// token would go with it, perhaps over http), and a server echoing the
// token in its errors does not put it into the resolver's error.
func TestAttackVaultRedirectAndEcho(t *testing.T) {
	const token = "hvs.attack-token-0123456789"
	var stolen atomic.Int64
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Vault-Token") != "" {
			stolen.Add(1)
		}
	}))
	t.Cleanup(thief.Close)
	vault := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/secret/data/redirect" {
			http.Redirect(w, r, thief.URL+"/v1/secret/data/app", http.StatusTemporaryRedirect)
			return
		}
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"errors":["permission denied for token ` + r.Header.Get("X-Vault-Token") + `"]}`))
	}))
	t.Cleanup(vault.Close)
	r := NewSecretResolver(Secrets{Vault: Vault{Address: vault.URL, TokenEnv: "VAULT_TOKEN"}})
	r.getenv = func(k string) string { return map[string]string{"VAULT_TOKEN": token}[k] }

	_, err := r.Value(context.Background(), SecretRef{Key: "graph.password", Vault: "secret/data/redirect#pw"})
	require.ErrorContains(t, err, "307")
	require.Zero(t, stolen.Load(), "the token followed a redirect")

	_, err = r.Value(context.Background(), SecretRef{Key: "graph.password", Vault: "secret/data/echo#pw"})
	require.ErrorContains(t, err, "permission denied")
	require.NotContains(t, err.Error(), "attack-token", "the token is in the error")
}
