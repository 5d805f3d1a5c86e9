package configs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUpstreamValidation: each hostile or mistaken upstream entry is
// refused at load with the key named.
func TestUpstreamValidation(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"name with separator", `[{name: a__b, url: "https://x.example/mcp"}]`, `upstreams[0].name: "a__b" must be`},
		{"name trailing underscore", `[{name: a_, url: "https://x.example/mcp"}]`, `upstreams[0].name: "a_" must be`},
		{"upper-case name", `[{name: Files, url: "https://x.example/mcp"}]`, `upstreams[0].name: "Files" must be`},
		{"name too long", `[{name: abcdefghijklmnopqrstuvwxy, url: "https://x.example/mcp"}]`, `upstreams[0].name:`},
		{"duplicate name", `[{name: a, url: "https://x.example/mcp"}, {name: a, url: "https://y.example/mcp"}]`, `upstreams[1].name: "a" is also the name of another upstream`},
		{"neither command nor url", `[{name: a}]`, `upstreams[0]: set exactly one of command`},
		{"both command and url", `[{name: a, command: [x], url: "https://x.example/mcp", sandbox: false}]`, `upstreams[0]: set exactly one of command`},
		{"plain http remote", `[{name: a, url: "http://mcp.example.com/mcp"}]`, `upstreams[0].url: "http://mcp.example.com/mcp" must use https`},
		{"mount relative", `[{name: a, command: [server], mounts: [lib/pkg]}]`, `upstreams[0].mounts[0]: "lib/pkg" must be an absolute, clean path`},
		{"mount of the root", `[{name: a, command: [server], mounts: [/]}]`, `upstreams[0].mounts[0]: "/" must be`},
		{"mount not clean", `[{name: a, command: [server], mounts: [/opt/../etc]}]`, `upstreams[0].mounts[0]: "/opt/../etc" must be`},
		{"mount unsandboxed", `[{name: a, command: [server], sandbox: false, mounts: [/opt/pkg]}]`, `upstreams[0].mounts: applies to sandboxed command upstreams only`},
		{"mount on a url", `[{name: a, url: "https://x.example/mcp", mounts: [/opt/pkg]}]`, `upstreams[0].mounts: applies to sandboxed command upstreams only`},
		{"message cap negative", `[{name: a, command: [server], max_message_bytes: -1}]`, `upstreams[0].max_message_bytes: -1 is outside`},
		{"unknown transport", `[{name: a, url: "https://x.example/mcp", transport: websocket}]`, `upstreams[0].transport: "websocket" is not one of streamable_http`},
		{"transport on a command", `[{name: a, command: [server], transport: sse}]`, `upstreams[0].transport: applies to url upstreams only`},
		{"literal secret value", `[{name: a, command: [server], sandbox: false, env: {GITHUB_TOKEN: ghp_abc}}]`, `upstreams[0].env.github_token: keys are NAME_env`},
		{"value not a variable name", `[{name: a, command: [server], sandbox: false, env: {TOKEN_env: "ghp-abc def"}}]`, `is not an environment variable name`},
		{"headers on a command", `[{name: a, command: [server], sandbox: false, headers_env: {Authorization: X}}]`, `upstreams[0].headers_env: applies to url upstreams only`},
		{"env and file for one name", `[{name: a, command: [server], sandbox: false, env: {T_env: X, T_file: /run/t}}]`, `upstreams[0].env.t: set only one of t_env, t_file and t_vault`},
		{"secret file relative", `[{name: a, command: [server], sandbox: false, env: {T_file: run/t}}]`, `upstreams[0].env.t_file: "run/t" must be an absolute path`},
		{"vault reference malformed", `[{name: a, command: [server], sandbox: false, env: {T_vault: "secret/t"}}]`, `upstreams[0].env.t_vault: "secret/t" is not mount/data/path#field`},
		{"unknown env suffix", `[{name: a, command: [server], sandbox: false, env: {T_literal: x}}]`, `upstreams[0].env.t_literal: keys are NAME_env, NAME_file or NAME_vault`},
		{"header file on a command", `[{name: a, command: [server], sandbox: false, headers_file: {Authorization: /run/t}}]`, `upstreams[0].headers_file: applies to url upstreams only`},
		{"header from two sources", `[{name: a, url: "https://x.example/mcp", headers_env: {Authorization: X}, headers_vault: {Authorization: "secret/data/a#b"}}]`, `upstreams[0].headers_vault.authorization: set only one of headers_env, headers_file and headers_vault for a header`},
		{"header vault malformed", `[{name: a, url: "https://x.example/mcp", headers_vault: {Authorization: "secret/data/a"}}]`, `upstreams[0].headers_vault.authorization: "secret/data/a" is not mount/data/path#field`},
		{"env on a url", `[{name: a, url: "https://x.example/mcp", env: {T_env: X}}]`, `upstreams[0].env: applies to command upstreams only`},
		{"bad header name", `[{name: a, url: "https://x.example/mcp", headers_env: {"a b": X}}]`, `is not an HTTP header name`},
		{"accept_flagged not a name", `[{name: a, url: "https://x.example/mcp", accept_flagged: ["x y"]}]`, `upstreams[0].accept_flagged[0]: "x y" is not an upstream tool name`},
		{"connect timeout too long", `[{name: a, url: "https://x.example/mcp", connect_timeout: 2h}]`, `upstreams[0].connect_timeout: must be between 0 and 10m0s`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := isolate(t)
			file := filepath.Join(dir, "toolwarden.yaml")
			writeFile(t, file, "secrets: {vault: {address: \"http://127.0.0.1:8200\", token_env: VAULT_TOKEN}}\nupstreams: "+tt.yaml+"\n")
			_, err := Load(Options{File: file})
			require.ErrorContains(t, err, tt.want)
			require.ErrorContains(t, err, file, "the error names the file the list came from")
		})
	}
}

// TestUpstreamUnsandboxedIsAWidening: sandbox: false is accepted, and the
// start-up log and config check say so, with the variables it receives.
func TestUpstreamUnsandboxedIsAWidening(t *testing.T) {
	dir := isolate(t)
	file := filepath.Join(dir, "toolwarden.yaml")
	writeFile(t, file, "upstreams:\n  - name: files\n    command: [npx, server]\n    sandbox: false\n    env: {GITHUB_TOKEN_env: MY_TOKEN}\n  - name: remote\n    url: https://mcp.example.com/mcp\n    headers_env: {Authorization: REMOTE_AUTH}\n")
	l, err := Load(Options{File: file})
	require.NoError(t, err)
	w := strings.Join(l.Widenings, "\n")
	require.Contains(t, w, `upstreams adds "files": runs ["npx" "server"] unsandboxed (sandbox: false)`)
	require.Contains(t, w, `upstreams "files" receives GITHUB_TOKEN from the variable MY_TOKEN`)
	require.Contains(t, w, `upstreams adds "remote": connects to https://mcp.example.com/mcp`)
	require.Equal(t, []UpstreamSecret{{Name: "GITHUB_TOKEN", Ref: SecretRef{Key: "k.env.github_token", Env: "MY_TOKEN"}}}, l.Config.Upstreams[0].EnvRefs("k"))
	require.Equal(t, "REMOTE_AUTH", l.Config.Upstreams[1].HeadersEnv["authorization"])
}

// TestUpstreamSecretFiles: env entries and headers read files and Vault
// as the other *_file and *_vault keys do: a file others may read is
// refused at load naming the key, a private one is accepted and named
// (never its contents) in the widenings, and a Vault reference needs
// secrets.vault.
func TestUpstreamSecretFiles(t *testing.T) {
	dir := isolate(t)
	file := filepath.Join(dir, "toolwarden.yaml")
	secret := filepath.Join(dir, "token")
	writeFile(t, secret, "s3cr3t-upstream-value\n")
	require.NoError(t, os.Chmod(secret, 0o644))
	writeFile(t, file, "upstreams:\n  - name: files\n    command: [srv]\n    sandbox: false\n    env: {GITHUB_TOKEN_file: "+secret+"}\n")
	_, err := Load(Options{File: file})
	require.ErrorContains(t, err, "upstreams[0].env.github_token_file: "+secret+" has mode 0644: a secret file must be 0600 or stricter")

	writeFile(t, file, "upstreams:\n  - name: remote\n    url: https://mcp.example.com/mcp\n    headers_file: {Authorization: "+secret+"}\n")
	_, err = Load(Options{File: file})
	require.ErrorContains(t, err, "upstreams[0].headers_file.authorization: "+secret+" has mode 0644")

	require.NoError(t, os.Chmod(secret, 0o600))
	writeFile(t, file, "upstreams:\n  - name: files\n    command: [srv]\n    sandbox: false\n    env: {GITHUB_TOKEN_file: "+secret+", OTHER_env: OTHER}\n"+
		"  - name: remote\n    url: https://mcp.example.com/mcp\n    headers_file: {Authorization: "+secret+"}\n")
	l, err := Load(Options{File: file})
	require.NoError(t, err)
	w := strings.Join(l.Widenings, "\n")
	require.Contains(t, w, `upstreams "files" receives GITHUB_TOKEN from the file `+secret)
	require.Contains(t, w, `upstreams "files" receives OTHER from the variable OTHER`)
	require.NotContains(t, w, "s3cr3t")
	refs := l.Config.Upstreams[0].EnvRefs("upstreams[0]")
	require.Equal(t, "GITHUB_TOKEN", refs[0].Name)
	require.Equal(t, configsRef("upstreams[0].env.github_token", "", secret, ""), refs[0].Ref)
	h := l.Config.Upstreams[1].HeaderRefs("upstreams[1]")
	require.Equal(t, "authorization", h[0].Name)
	require.Equal(t, secret, h[0].Ref.File)

	writeFile(t, file, "upstreams:\n  - name: files\n    command: [srv]\n    sandbox: false\n    env: {T_vault: secret/data/app#t}\n")
	_, err = Load(Options{File: file})
	require.ErrorContains(t, err, "secrets.vault.address: must be set")
}

func configsRef(key, env, file, vault string) SecretRef {
	return SecretRef{Key: key, Env: env, File: file, Vault: vault}
}

// TestUpstreamsDir: upstreams.d/*.yaml adds upstreams beside the config
// file; its errors name the file and line, and a name used twice across
// files is refused.
func TestUpstreamsDir(t *testing.T) {
	dir := isolate(t)
	file := filepath.Join(dir, "toolwarden.yaml")
	writeFile(t, file, "upstreams:\n  - {name: a, url: \"https://a.example/mcp\"}\n")
	extra := filepath.Join(dir, UpstreamsDir, "b.yaml")
	writeFile(t, extra, "upstreams:\n  - name: b\n    command: [srv]\n    sandbox: false\n    env: {Token_env: TOK}\n")
	l, err := Load(Options{File: file})
	require.NoError(t, err)
	require.Len(t, l.Config.Upstreams, 2)
	require.Equal(t, []UpstreamSecret{{Name: "TOKEN", Ref: SecretRef{Key: "k.env.token", Env: "TOK"}}}, l.Config.Upstreams[1].EnvRefs("k"))
	require.Contains(t, strings.Join(l.Widenings, "\n"), "(from "+extra+":2)")

	writeFile(t, extra, "- name: a\n  url: https://b.example/mcp\n")
	_, err = Load(Options{File: file})
	require.ErrorContains(t, err, extra+`:1: upstreams[1].name: "a" is also the name of the upstream at `+file)

	writeFile(t, extra, "- name: b\n  command: [srv]\n  bogus: 1\n")
	_, err = Load(Options{File: file})
	require.ErrorContains(t, err, extra+":3: upstreams[0].bogus: unknown key")

	writeFile(t, extra, "- name: b\n  command: [srv]\n  mounts: [rel]\n")
	_, err = Load(Options{File: file})
	require.ErrorContains(t, err, extra+`:1: upstreams[0].mounts[0]: "rel" must be an absolute`)
}

// TestUpstreamSandboxedByDefault: a command upstream without sandbox: is
// accepted and runs in the sandbox; its mounts are listed as what it sees.
func TestUpstreamSandboxedByDefault(t *testing.T) {
	dir := isolate(t)
	file := filepath.Join(dir, "toolwarden.yaml")
	writeFile(t, file, "upstreams:\n  - name: files\n    command: [node, /opt/pkg/index.js]\n    mounts: [/opt/pkg]\n    max_message_bytes: 1024\n")
	l, err := Load(Options{File: file})
	require.NoError(t, err)
	require.True(t, l.Config.Upstreams[0].Sandboxed())
	w := strings.Join(l.Widenings, "\n")
	require.Contains(t, w, `upstreams adds "files": runs ["node" "/opt/pkg/index.js"] in the sandbox`)
	require.Contains(t, w, `upstreams "files" sees the host directory /opt/pkg, read-only`)
	require.NotContains(t, w, "unsandboxed")
}

// TestUpstreamPinsMode: upstream_pins is one of its three values, named in
// the error otherwise; unset, it is block when a pins file is beside the
// config file and trust_on_first_use without one; warn is a widening.
func TestUpstreamPinsMode(t *testing.T) {
	dir := isolate(t)
	file := filepath.Join(dir, "toolwarden.yaml")
	writeFile(t, file, "upstream_pins: off\n")
	_, err := Load(Options{File: file})
	require.ErrorContains(t, err, `upstream_pins: "off" is not one of block, warn, trust_on_first_use`)

	writeFile(t, file, "log: {level: info}\n")
	l, err := Load(Options{File: file})
	require.NoError(t, err)
	require.Equal(t, PinsTrustOnFirstUse, l.Config.PinsMode())
	writeFile(t, filepath.Join(dir, PinsFileName), "{}")
	require.Equal(t, PinsBlock, l.Config.PinsMode())

	writeFile(t, file, "upstream_pins: warn\n")
	l, err = Load(Options{File: file})
	require.NoError(t, err)
	require.Equal(t, PinsWarn, l.Config.PinsMode())
	require.Contains(t, strings.Join(l.Widenings, "\n"), "upstream_pins is warn")
}
