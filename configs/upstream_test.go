package configs

import (
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
		{"message cap on a url", `[{name: a, url: "https://x.example/mcp", max_message_bytes: 10}]`, `upstreams[0].max_message_bytes: applies to command upstreams only`},
		{"unknown transport", `[{name: a, url: "https://x.example/mcp", transport: websocket}]`, `upstreams[0].transport: "websocket" is not one of streamable_http`},
		{"transport on a command", `[{name: a, command: [server], transport: sse}]`, `upstreams[0].transport: applies to url upstreams only`},
		{"literal secret value", `[{name: a, command: [server], sandbox: false, env: {GITHUB_TOKEN: ghp_abc}}]`, `upstreams[0].env.github_token: keys are NAME_env`},
		{"value not a variable name", `[{name: a, command: [server], sandbox: false, env: {TOKEN_env: "ghp-abc def"}}]`, `is not an environment variable name`},
		{"headers on a command", `[{name: a, command: [server], sandbox: false, headers_env: {Authorization: X}}]`, `upstreams[0].headers_env: applies to url upstreams only`},
		{"env on a url", `[{name: a, url: "https://x.example/mcp", env: {T_env: X}}]`, `upstreams[0].env: applies to command upstreams only`},
		{"bad header name", `[{name: a, url: "https://x.example/mcp", headers_env: {"a b": X}}]`, `is not an HTTP header name`},
		{"accept_flagged not a name", `[{name: a, url: "https://x.example/mcp", accept_flagged: ["x y"]}]`, `upstreams[0].accept_flagged[0]: "x y" is not an upstream tool name`},
		{"connect timeout too long", `[{name: a, url: "https://x.example/mcp", connect_timeout: 2h}]`, `upstreams[0].connect_timeout: must be between 0 and 10m0s`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := isolate(t)
			file := filepath.Join(dir, "toolwarden.yaml")
			writeFile(t, file, "upstreams: "+tt.yaml+"\n")
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
	require.Equal(t, [][2]string{{"GITHUB_TOKEN", "MY_TOKEN"}}, l.Config.Upstreams[0].EnvNames())
	require.Equal(t, "REMOTE_AUTH", l.Config.Upstreams[1].HeadersEnv["authorization"])
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
	require.Equal(t, [][2]string{{"TOKEN", "TOK"}}, l.Config.Upstreams[1].EnvNames())
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
