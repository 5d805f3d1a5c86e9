package configs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/joho/godotenv"
)

// Secrets come from three more places than the process environment:
//
//   - a file beside each *_env key (*_file: the path of a file holding the
//     value), refused unless its mode is 0600 or stricter;
//   - a .env file the config names (secrets.dotenv; never one found in
//     the workspace), whose variables every *_env key may name, the
//     process environment winning;
//   - a Vault or OpenBao KV v2 secret (*_vault: "mount/data/path#field"),
//     read over the HTTP API from secrets.vault.address with the token
//     that secrets.vault.token_env or token_file holds.
//
// A value is read when it is needed and handed to its user; the resolver
// keeps none of them (nor the .env file's contents, nor the Vault token),
// and no error or log line holds one.

// Secrets configures where secrets are read from besides the environment.
type Secrets struct {
	// Dotenv is the path of a .env file (KEY=VALUE lines) whose variables
	// the *_env keys may name. Mode 0600 or stricter.
	Dotenv string `mapstructure:"dotenv" yaml:"dotenv"`
	Vault  Vault  `mapstructure:"vault" yaml:"vault"`
}

// Vault is a Vault or OpenBao server holding KV v2 secrets.
type Vault struct {
	// Address is the server's URL: https, or http on a loopback host.
	Address string `mapstructure:"address" yaml:"address"`
	// TokenEnv or TokenFile holds the token (never a value here).
	TokenEnv  string `mapstructure:"token_env" yaml:"token_env"`
	TokenFile string `mapstructure:"token_file" yaml:"token_file"`
	// Namespace is sent as X-Vault-Namespace (Vault Enterprise, OpenBao).
	Namespace string        `mapstructure:"namespace" yaml:"namespace"`
	Timeout   time.Duration `mapstructure:"timeout" yaml:"timeout"`
}

// SecretRef is where one secret is read from: File, else Vault
// ("mount/data/path#field"), else Env (the name of a variable of the
// environment or the .env file). Key names the config key without its suffix
// (graph.password), for errors.
type SecretRef struct {
	Key              string
	Env, File, Vault string
}

// Set reports whether the ref names a source.
func (r SecretRef) Set() bool { return r.Env != "" || r.File != "" || r.Vault != "" }

// SecretResolver reads secrets; it holds none.
type SecretResolver struct {
	cfg    Secrets
	getenv func(string) string
	client *http.Client
}

// NewSecretResolver returns the resolver of s over the process
// environment.
func NewSecretResolver(s Secrets) *SecretResolver {
	timeout := s.Vault.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return &SecretResolver{cfg: s, getenv: os.Getenv, client: &http.Client{Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Getenv is os.Getenv, falling back to secrets.dotenv's variables. A .env
// file that cannot be read safely reads as empty; Check reports why.
func (r *SecretResolver) Getenv(name string) string {
	if v := r.getenv(name); v != "" {
		return v
	}
	v, _ := r.dotenv(name)
	return v
}

// Value reads ref's secret. An unset ref is "". The error names the key
// and the source, never the value.
func (r *SecretResolver) Value(ctx context.Context, ref SecretRef) (string, error) {
	switch {
	case ref.File != "":
		v, err := ReadSecretFile(ref.File)
		if err != nil {
			return "", fmt.Errorf("%s: %w", ref.keyOf("file"), err)
		}
		return v, nil
	case ref.Vault != "":
		v, err := r.vault(ctx, ref.Vault)
		if err != nil {
			return "", fmt.Errorf("%s: %w", ref.keyOf("vault"), err)
		}
		return v, nil
	case ref.Env != "":
		if v := r.getenv(ref.Env); v != "" {
			return v, nil
		}
		v, err := r.dotenv(ref.Env)
		if err != nil {
			return "", fmt.Errorf("%s: %w", ref.keyOf("env"), err)
		}
		return v, nil
	}
	return "", nil
}

// dotenv reads name from secrets.dotenv ("" when none is configured or
// it does not set name).
func (r *SecretResolver) dotenv(name string) (string, error) {
	if r.cfg.Dotenv == "" {
		return "", nil
	}
	b, err := readPrivate(r.cfg.Dotenv)
	if err != nil {
		return "", fmt.Errorf("secrets.dotenv: %w", err)
	}
	vars, err := godotenv.Parse(bytes.NewReader(b))
	clear(b)
	if err != nil {
		return "", fmt.Errorf("secrets.dotenv: %s is not a .env file: %v", r.cfg.Dotenv, err)
	}
	return vars[name], nil
}

// ReadSecretFile reads a secret from path, trimmed of surrounding space.
// It refuses a file that is not regular or that its group or others may
// read or write (mode 0600 or stricter is needed).
func ReadSecretFile(path string) (string, error) {
	b, err := readPrivate(path)
	if err != nil {
		return "", err
	}
	v := strings.TrimSpace(string(b))
	clear(b)
	if v == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return v, nil
}

// maxSecretFile bounds what a secret or .env file may hold.
const maxSecretFile = 1 << 20

// readPrivate reads a regular file of mode 0600 or stricter. What it
// checks is the file it opened (through the descriptor), and opening
// never waits (a FIFO is refused, not waited on).
func readPrivate(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openPrivateFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s has mode %04o: a secret file must be 0600 or stricter (chmod 600 %s)", path, perm, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSecretFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxSecretFile)
	}
	return b, nil
}

// vault reads ref ("mount/data/path#field") from the KV v2 API.
func (r *SecretResolver) vault(ctx context.Context, ref string) (string, error) {
	p, field, err := splitVaultRef(ref)
	if err != nil {
		return "", err
	}
	v := r.cfg.Vault
	if v.Address == "" {
		return "", errors.New("secrets.vault.address is not set")
	}
	token, err := r.Value(ctx, SecretRef{Key: "secrets.vault.token", Env: v.TokenEnv, File: v.TokenFile})
	if err != nil {
		return "", err
	}
	if token == "" {
		return "", errors.New("no Vault token: set the variable secrets.vault.token_env names, or secrets.vault.token_file")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(v.Address, "/")+"/v1/"+p, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("X-Vault-Token", token)
	if v.Namespace != "" {
		req.Header.Set("X-Vault-Namespace", v.Namespace)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("reading %s from Vault: %w", p, redactURLError(err))
	}
	defer resp.Body.Close()
	s, err := kvField(resp, p, field)
	if err != nil && strings.Contains(err.Error(), token) {
		// The server's error text echoed the token.
		return "", errors.New(strings.ReplaceAll(err.Error(), token, "[redacted]"))
	}
	return s, err
}

// splitVaultRef splits "mount/data/path#field".
func splitVaultRef(ref string) (path, field string, err error) {
	path, field, ok := strings.Cut(ref, "#")
	switch {
	case !ok || path == "" || field == "":
		return "", "", fmt.Errorf("%q is not mount/data/path#field", ref)
	case !strings.Contains(path, "/data/"):
		return "", "", fmt.Errorf("%q is not a KV v2 data path (mount/data/path#field, e.g. secret/data/app#token)", ref)
	case strings.Contains(path, "..") || strings.ContainsAny(path, "?#\\") || strings.HasPrefix(path, "/"):
		return "", "", fmt.Errorf("%q is not a plain secret path", ref)
	}
	return path, field, nil
}

// kvField reads field from a KV v2 read response: {"data":{"data":{...}}}.
func kvField(resp *http.Response, path, field string) (string, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSecretFile))
	if err != nil {
		return "", err
	}
	defer clear(body)
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Errors []string `json:"errors"`
		}
		_ = json.Unmarshal(body, &e)
		return "", fmt.Errorf("reading %s from Vault: %s %s", path, resp.Status, strings.Join(e.Errors, "; "))
	}
	var kv struct {
		Data struct {
			Data map[string]any `json:"data"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &kv); err != nil {
		return "", fmt.Errorf("reading %s from Vault: not a KV v2 response: %v", path, err)
	}
	s, ok := kv.Data.Data[field].(string)
	if !ok || s == "" {
		return "", fmt.Errorf("the Vault secret %s has no string field %q", path, field)
	}
	return s, nil
}

// redactURLError drops the URL from a client error (it holds no secret,
// but a proxy's error text might): only the cause is kept.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
