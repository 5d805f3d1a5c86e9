package configs

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// SecretSources is embedded in every section that names secrets: Load
// binds it to the config's secrets section, so that the section's
// secrets are read from its .env file and Vault server where it is
// handed (a section built in code reads the environment and files only).
type SecretSources struct{ s *Secrets }

// Secret reads ref (see SecretResolver.Value).
func (b SecretSources) Secret(ctx context.Context, ref SecretRef) (string, error) {
	var s Secrets
	if b.s != nil {
		s = *b.s
	}
	return NewSecretResolver(s).Value(ctx, ref)
}

// Getenv is os.Getenv falling back to the bound .env file, for the
// consumers that read variables by name (declared tools, upstreams).
func (b SecretSources) Getenv(name string) string {
	var s Secrets
	if b.s != nil {
		s = *b.s
	}
	return NewSecretResolver(s).Getenv(name)
}

// bindSecrets binds every section's SecretSources to a copy of c.Secrets.
func (c *Config) bindSecrets() {
	s := c.Secrets
	b := SecretSources{&s}
	c.Graph.SecretSources, c.Artifacts.SecretSources, c.Cluster.SecretSources = b, b, b
	c.Approval.Webhook.SecretSources, c.HTTP.OAuth.Introspection.SecretSources = b, b
	c.HTTP.SecretSources, c.Bridge.SecretSources = b, b
}

// Sources returns the secret sources Load bound to c's sections.
func (c Config) Sources() SecretSources { return c.Graph.SecretSources }

// PasswordRef is where graph.password comes from.
func (g Graph) PasswordRef() SecretRef {
	return SecretRef{Key: "graph.password", Env: g.PasswordEnv, File: g.PasswordFile, Vault: g.PasswordVault}
}

// ReadPasswordRef is where graph.read_password comes from.
func (g Graph) ReadPasswordRef() SecretRef { return g.readPasswordRef() }

func (g Graph) readPasswordRef() SecretRef {
	return SecretRef{Key: "graph.read_password", Env: g.ReadPasswordEnv, File: g.ReadPasswordFile, Vault: g.ReadPasswordVault}
}

// AccessKeyRef and SecretKeyRef are where the S3 credentials come from.
func (a Artifacts) AccessKeyRef() SecretRef {
	return SecretRef{Key: "artifacts.access_key", Env: a.AccessKeyEnv, File: a.AccessKeyFile, Vault: a.AccessKeyVault}
}

// SecretKeyRef: see AccessKeyRef.
func (a Artifacts) SecretKeyRef() SecretRef {
	return SecretRef{Key: "artifacts.secret_key", Env: a.SecretKeyEnv, File: a.SecretKeyFile, Vault: a.SecretKeyVault}
}

// SecretRef is where the webhook's shared secret comes from.
func (w ApprovalWebhook) SecretRef() SecretRef {
	return SecretRef{Key: "approval.webhook.secret", Env: w.SecretEnv, File: w.SecretFile, Vault: w.SecretVault}
}

// ClientSecretRef is where the introspection client secret comes from.
func (i Introspection) ClientSecretRef() SecretRef {
	return SecretRef{Key: "http.oauth.introspection.client_secret", Env: i.ClientSecretEnv, File: i.ClientSecretFile, Vault: i.ClientSecretVault}
}

func (c Cluster) secretRef() SecretRef {
	return SecretRef{Key: "cluster.secret", Env: c.SecretEnv, File: c.SecretFile, Vault: c.SecretVault}
}

func (c Cluster) redisPasswordRef() SecretRef {
	return SecretRef{Key: "cluster.redis_password", Env: c.RedisPasswordEnv, File: c.RedisPasswordFile, Vault: c.RedisPasswordVault}
}

// TokenRef is where the HTTP bearer token comes from besides
// TOOLWARDEN_HTTP_TOKEN, which wins (httpserve.ResolveToken): http.token_file
// or http.token_vault, else the variable in secrets.dotenv.
func (h HTTP) TokenRef() SecretRef {
	return SecretRef{Key: "http.token", Env: EnvPrefix + "_HTTP_TOKEN", File: h.TokenFile, Vault: h.TokenVault}
}

// TokenRef is where the i-th identity's bearer token comes from.
func (id HTTPIdentity) TokenRef(i int) SecretRef {
	return SecretRef{Key: fmt.Sprintf("http.identities[%d].token", i), Env: id.TokenEnv, File: id.TokenFile, Vault: id.TokenVault}
}

// APIKeyRef is where `toolwarden gemini` reads the Gemini API key from:
// bridge.api_key_env, _file or _vault, else GEMINI_API_KEY or
// GOOGLE_API_KEY (the bridge's default).
func (b Bridge) APIKeyRef() SecretRef {
	return SecretRef{Key: "bridge.api_key", Env: b.APIKeyEnv, File: b.APIKeyFile, Vault: b.APIKeyVault}
}

// APIKeyRef is where a declared http tool's API key comes from.
func (t DeclaredTool) APIKeyRef() SecretRef {
	return SecretRef{Key: "api_key", Env: t.APIKeyEnv, File: t.APIKeyFile, Vault: t.APIKeyVault}
}

// Ref is where a declared http tool's i-th header_env value comes from:
// its env, file or vault key.
func (h HeaderEnv) Ref(i int) SecretRef {
	return SecretRef{Key: fmt.Sprintf("header_env[%d].", i), Env: h.Env, File: h.File, Vault: h.Vault}
}

// secretRefs lists every secret the config names (declared tools' are
// checked with the tools: CheckSecretRef).
func (c Config) secretRefs() []SecretRef {
	refs := []SecretRef{
		c.Graph.PasswordRef(), c.Graph.readPasswordRef(), c.Artifacts.AccessKeyRef(), c.Artifacts.SecretKeyRef(),
		c.Approval.Webhook.SecretRef(), c.HTTP.OAuth.Introspection.ClientSecretRef(), c.Cluster.secretRef(), c.Cluster.redisPasswordRef(),
		{Key: "secrets.vault.token", Env: c.Secrets.Vault.TokenEnv, File: c.Secrets.Vault.TokenFile},
		c.HTTP.TokenRef(), c.Bridge.APIKeyRef(),
	}
	for i, id := range c.HTTP.Identities {
		refs = append(refs, id.TokenRef(i))
	}
	return refs
}

// keyOf is the config key of ref's source src (env, file, vault):
// graph.password_file, header_env[0].file for a Key ending in ".", or
// Key with src in place of its %s.
func (r SecretRef) keyOf(src string) string {
	if strings.Contains(r.Key, "%s") { // upstreams[0].headers_%s.authorization
		return fmt.Sprintf(r.Key, src)
	}
	if strings.HasSuffix(r.Key, ".") {
		return r.Key + src
	}
	return r.Key + "_" + src
}

// CheckSecretRef checks ref's file and vault keys as validateSecrets
// does (not both, a private absolute file, a well-formed reference), for
// the declared tools, which Load checks apart; it reports whether ref
// reads from Vault.
func CheckSecretRef(add func(string, string, ...any), ref SecretRef) (vault bool) {
	if ref.File != "" && ref.Vault != "" {
		add(ref.keyOf("file"), "set only one of %s and %s", ref.keyOf("file"), ref.keyOf("vault"))
	}
	if ref.File != "" {
		checkSecretPath(add, ref.keyOf("file"), ref.File)
	}
	if ref.Vault != "" {
		if _, _, err := splitVaultRef(ref.Vault); err != nil {
			add(ref.keyOf("vault"), "%v", err)
		}
	}
	return ref.Vault != ""
}

// countSet counts the non-empty values.
func countSet(vs ...string) int {
	n := 0
	for _, v := range vs {
		if v != "" {
			n++
		}
	}
	return n
}

// validateSecrets checks the secrets section and every *_file and
// *_vault key (either, when set, is used instead of *_env): not both, files private (0600 or stricter,
// checked here when the file exists, so that config check names the key),
// Vault references well formed and a server to read them from.
func (c Config) validateSecrets(add func(string, string, ...any)) {
	needVault := false
	for _, r := range c.secretRefs() {
		needVault = CheckSecretRef(add, r) || needVault
	}
	needVault = c.upstreamsUseVault() || needVault
	if c.Secrets.Dotenv != "" {
		checkSecretPath(add, "secrets.dotenv", c.Secrets.Dotenv)
	}
	c.Secrets.Vault.validate(add, needVault)
}

// checkSecretPath refuses a relative path (it would be read from wherever
// the server starts, such as the workspace) and an existing file that is
// not private.
func checkSecretPath(add func(string, string, ...any), key, p string) {
	if !filepath.IsAbs(p) {
		add(key, "%q must be an absolute path (a secret file is never looked up relative to the workspace)", p)
		return
	}
	if fi, err := os.Stat(p); err == nil {
		if !fi.Mode().IsRegular() {
			add(key, "%s is not a regular file", p)
		} else if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			add(key, "%s has mode %04o: a secret file must be 0600 or stricter (chmod 600 %s)", p, perm, p)
		}
	}
}

func (v Vault) validate(add func(string, string, ...any), needed bool) {
	if v.Address == "" {
		if needed {
			add("secrets.vault.address", "must be set: a *_vault key names a secret to read from Vault")
		}
		return
	}
	u, err := url.Parse(v.Address)
	switch {
	case err != nil || u.Host == "":
		add("secrets.vault.address", "%q is not a URL", v.Address)
	case u.User != nil || u.RawQuery != "":
		add("secrets.vault.address", "must hold no credentials or query; the token comes from secrets.vault.token_env or token_file")
	case u.Scheme != "https" && !(u.Scheme == "http" && IsLoopback(u.Hostname())):
		add("secrets.vault.address", "%q must be https (http only on a loopback host)", v.Address)
	}
	if (v.TokenEnv == "") == (v.TokenFile == "") {
		add("secrets.vault.token_env", "set exactly one of secrets.vault.token_env and secrets.vault.token_file")
	} else if v.TokenEnv != "" && !envVarName.MatchString(v.TokenEnv) {
		add("secrets.vault.token_env", "is not an environment variable name; name the variable that holds the token, never the token itself")
	}
	if v.Timeout < 0 {
		add("secrets.vault.timeout", "must not be negative")
	}
}

// String names a ref's source for messages: never a value.
func (r SecretRef) String() string {
	switch {
	case r.File != "":
		return fmt.Sprintf("%s (%s)", r.keyOf("file"), r.File)
	case r.Vault != "":
		return fmt.Sprintf("%s (%s)", r.keyOf("vault"), r.Vault)
	}
	return fmt.Sprintf("%s (%s)", r.keyOf("env"), r.Env)
}

// Credentials reads the S3 access and secret keys; the error names the
// keys to set, never a value.
func (a Artifacts) Credentials(ctx context.Context) (access, secret string, err error) {
	if access, err = a.Secret(ctx, a.AccessKeyRef()); err != nil {
		return "", "", err
	}
	if secret, err = a.Secret(ctx, a.SecretKeyRef()); err != nil {
		return "", "", err
	}
	if access == "" || secret == "" {
		return "", "", fmt.Errorf("no credentials: set %s and %s", a.AccessKeyRef(), a.SecretKeyRef())
	}
	return access, secret, nil
}
