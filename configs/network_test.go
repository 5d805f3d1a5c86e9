package configs

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNetworkAllowRefusesTricks: every entry that is not a plain DNS
// name, a wildcard below a real domain or a plain IP, with a port, is
// refused at load naming the key and the entry.
func TestNetworkAllowRefusesTricks(t *testing.T) {
	tests := []struct{ entry, want string }{
		{"pypi.org", "not host:port"},
		{"pypi.org:0", `port "0" is not a number`},
		{"pypi.org:65536", `port "65536"`},
		{"pypi.org:0443", `port "0443"`},
		{"pypi.org:*", `port "*"`},
		{"2130706433:80", "last label does not start with a letter"},
		{"0177.0.0.1:80", "last label does not start with a letter"},
		{"0x7f.1:80", "last label does not start with a letter"},
		{"0x7f:80", "last label does not start with a letter"},
		{"127.1:80", "last label does not start with a letter"},
		{"[::ffff:127.0.0.1]:80", "IPv4-mapped"},
		{"[fe80::1%eth0]:80", "zone"},
		{"pypi.org.:443", "no trailing dot"},
		{"py%70i.org:443", "not a plain DNS name"},
		{"user@pypi.org:443", "not a plain DNS name"},
		{"py_pi.org:443", "not a plain DNS name"},
		{"*:443", "not a plain DNS name"},
		{"*.com:443", "at least two labels"},
		{"a.*.example.com:443", "not a plain DNS name"},
		{"-a.example.com:443", "not a plain DNS name"},
	}
	for _, tt := range tests {
		t.Run(tt.entry, func(t *testing.T) {
			dir := isolate(t)
			file := filepath.Join(dir, "toolwarden.yaml")
			writeFile(t, file, "exec:\n  network:\n    allow: [\"pypi.org:443\", \""+tt.entry+"\"]\n")
			_, err := Load(Options{File: file})
			require.ErrorContains(t, err, `exec.network.allow[1]: "`+tt.entry+`": `)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestParseNetAllow(t *testing.T) {
	a, err := ParseNetAllow("*.Example.com:443")
	require.NoError(t, err)
	require.True(t, a.Match("files.example.com", 443))
	require.True(t, a.Match("a.b.example.com", 443), "a wildcard covers one or more labels")
	require.False(t, a.Match("example.com", 443), "never the apex")
	require.False(t, a.Match("badexample.com", 443))
	require.False(t, a.Match("files.example.com", 80))

	a, err = ParseNetAllow("localhost:8443")
	require.NoError(t, err)
	require.True(t, a.Match("localhost", 8443))

	a, err = ParseNetAllow("[fd00::5]:443")
	require.NoError(t, err)
	require.Equal(t, "fd00::5", a.Addr.String())
	require.False(t, a.Match("fd00::5", 443), "IP entries match addresses, not names")
}

// TestNetworkCredentials: a credential names a listed host, a header, one
// source of its value and a distinctive placeholder; each mistake is
// refused with its key.
func TestNetworkCredentials(t *testing.T) {
	base := "exec:\n  network:\n    allow: [\"api.github.com:443\", \"*.example.com:443\"]\n    credentials:\n"
	tests := []struct{ name, cred, want string }{
		{"host not listed", `{host: other.org, header: Authorization, value_env: T, placeholder: TOOLWARDEN_X}`, `exec.network.credentials[0].host: "other.org" is not in the allow list`},
		{"host not a name", `{host: "10.0.0.1", header: Authorization, value_env: T, placeholder: TOOLWARDEN_X}`, `exec.network.credentials[0].host: "10.0.0.1" is not a DNS name`},
		{"bad header", `{host: api.github.com, header: "a b", value_env: T, placeholder: TOOLWARDEN_X}`, `exec.network.credentials[0].header: "a b" is not an HTTP header name`},
		{"no value", `{host: api.github.com, header: Authorization, placeholder: TOOLWARDEN_X}`, `exec.network.credentials[0]: set exactly one of value_env and value_file`},
		{"two values", `{host: api.github.com, header: Authorization, value_env: T, value_file: /x, placeholder: TOOLWARDEN_X}`, `set exactly one of value_env and value_file`},
		{"literal value", `{host: api.github.com, header: Authorization, value_env: "Bearer ghp_x", placeholder: TOOLWARDEN_X}`, `exec.network.credentials[0].value_env: "Bearer ghp_x" is not an environment variable name`},
		{"relative file", `{host: api.github.com, header: Authorization, value_file: token, placeholder: TOOLWARDEN_X}`, `exec.network.credentials[0].value_file: "token" must be an absolute path`},
		{"short placeholder", `{host: api.github.com, header: Authorization, value_env: T, placeholder: X}`, `exec.network.credentials[0].placeholder: "X" must be 8..128`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := isolate(t)
			file := filepath.Join(dir, "toolwarden.yaml")
			writeFile(t, file, base+"      - "+tt.cred+"\n")
			_, err := Load(Options{File: file})
			require.ErrorContains(t, err, tt.want)
		})
	}
	t.Run("duplicate placeholder", func(t *testing.T) {
		dir := isolate(t)
		file := filepath.Join(dir, "toolwarden.yaml")
		writeFile(t, file, base+
			"      - {host: api.github.com, header: Authorization, value_env: T, placeholder: TOOLWARDEN_X}\n"+
			"      - {host: a.example.com, header: Authorization, value_env: T, placeholder: TOOLWARDEN_X}\n")
		_, err := Load(Options{File: file})
		require.ErrorContains(t, err, `exec.network.credentials[1].placeholder: "TOOLWARDEN_X" is also the placeholder`)
	})
	// A value file others may read, or a FIFO, is refused when the
	// config loads, as every *_file secret is.
	t.Run("value_file not private", func(t *testing.T) {
		dir := isolate(t)
		open := filepath.Join(dir, "token")
		writeFile(t, open, "ghp_x\n")
		require.NoError(t, os.Chmod(open, 0o644))
		fifo := filepath.Join(dir, "fifo")
		require.NoError(t, syscall.Mkfifo(fifo, 0o600))
		file := filepath.Join(dir, "toolwarden.yaml")
		writeFile(t, file, base+
			"      - {host: api.github.com, header: Authorization, value_file: "+open+", placeholder: TOOLWARDEN_X}\n"+
			"      - {host: a.example.com, header: Authorization, value_file: "+fifo+", placeholder: TOOLWARDEN_Y}\n")
		_, err := Load(Options{File: file})
		require.ErrorContains(t, err, "exec.network.credentials[0].value_file: "+open+" has mode 0644: a secret file must be 0600 or stricter")
		require.ErrorContains(t, err, "exec.network.credentials[1].value_file: "+fifo+" is not a regular file")
	})
	t.Run("upstream_ca_file without a certificate", func(t *testing.T) {
		dir := isolate(t)
		file := filepath.Join(dir, "toolwarden.yaml")
		ca := filepath.Join(dir, "ca.pem")
		writeFile(t, ca, "not a certificate\n")
		writeFile(t, file, "exec:\n  network:\n    allow: [\"a.example.com:443\"]\n    upstream_ca_file: "+ca+"\n")
		_, err := Load(Options{File: file})
		require.ErrorContains(t, err, "exec.network.upstream_ca_file: "+ca+" holds no PEM certificate")
	})
}

// TestNetworkIsAWidening: the default is no network; a list is accepted,
// parsed, and logged as a widening with its credentials (never a value).
func TestNetworkIsAWidening(t *testing.T) {
	dir := isolate(t)
	l, err := Load(Options{File: filepath.Join(dir, "none.yaml")})
	if err == nil {
		require.False(t, l.Config.Exec.Network.Enabled(), "the default grants no network")
	}
	file := filepath.Join(dir, "toolwarden.yaml")
	writeFile(t, file, "exec:\n  network:\n    allow: [\"pypi.org:443\", \"api.github.com:443\"]\n    credentials:\n"+
		"      - {host: api.github.com, header: Authorization, value_env: GITHUB_TOKEN, placeholder: TOOLWARDEN_GITHUB}\n")
	l, err = Load(Options{File: file})
	require.NoError(t, err)
	require.Equal(t, []string{"pypi.org:443", "api.github.com:443"}, l.Config.Exec.Network.Allow)
	w := strings.Join(l.Widenings, "\n")
	require.Contains(t, w, "exec.network.allow opens the sandbox's network to [pypi.org:443 api.github.com:443]")
	require.Contains(t, w, "puts the value of the variable GITHUB_TOKEN into the Authorization header of requests to api.github.com")
}

// TestNetworkOnUpstreams: the same block is checked under the upstream's
// key, and refused where no sandbox would enforce it.
func TestNetworkOnUpstreams(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"bad entry", `[{name: a, command: [server], sandbox: false, network: {allow: ["0x7f.1:80"]}}]`, `upstreams[0].network.allow[0]: "0x7f.1:80"`},
		{"unsandboxed", `[{name: a, command: [server], sandbox: false, network: {allow: ["pypi.org:443"]}}]`, `upstreams[0].network: applies to sandboxed upstreams only`},
		{"url upstream", `[{name: a, url: "https://x.example/mcp", network: {allow: ["pypi.org:443"]}}]`, `upstreams[0].network: applies to command upstreams only`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := isolate(t)
			file := filepath.Join(dir, "toolwarden.yaml")
			writeFile(t, file, "upstreams: "+tt.yaml+"\n")
			_, err := Load(Options{File: file})
			require.ErrorContains(t, err, tt.want)
		})
	}
}

// TestNetworkOnDeclaredTools: a declared tool's block is checked under
// its own key, whatever the tool checker says.
func TestNetworkOnDeclaredTools(t *testing.T) {
	dir := isolate(t)
	file := filepath.Join(dir, "toolwarden.yaml")
	writeFile(t, file, "tools:\n  - name: fetch_pkg\n    type: cli\n    network: {allow: [\"127.1:443\"]}\n")
	_, err := Load(Options{File: file, CheckTool: func(*DeclaredTool, func(string, string, ...any)) {}})
	require.ErrorContains(t, err, `tools[0].network.allow[0]: "127.1:443"`)

	writeFile(t, file, "tools:\n  - name: call_api\n    type: http\n    network: {allow: [\"pypi.org:443\"]}\n")
	_, err = Load(Options{File: file, CheckTool: func(*DeclaredTool, func(string, string, ...any)) {}})
	require.ErrorContains(t, err, `tools[0].network: applies only to cli tools`)

	writeFile(t, file, "tools:\n  - name: fetch_pkg\n    type: cli\n    network: {allow: [\"pypi.org:443\"]}\n")
	l, err := Load(Options{File: file, CheckTool: func(*DeclaredTool, func(string, string, ...any)) {}})
	require.NoError(t, err)
	require.Contains(t, strings.Join(l.Widenings, "\n"), "tools[0].network.allow opens the sandbox's network to [pypi.org:443]")
}
