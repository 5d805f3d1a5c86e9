package mcpserver_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/mcpserver"
)

// loadYAML loads body as a config file over the embedded defaults.
func loadYAML(t *testing.T, body string) *configs.Loaded {
	t.Helper()
	file := filepath.Join(t.TempDir(), "toolwarden.yaml")
	require.NoError(t, os.WriteFile(file, []byte(body), 0o600))
	l, err := configs.Load(configs.Options{File: file})
	require.NoError(t, err)
	return l
}

func diffOf(t *testing.T, old, new string) mcpserver.PolicyDiff {
	t.Helper()
	d, err := mcpserver.DiffPolicy(loadYAML(t, old), loadYAML(t, new), false, io.Discard)
	require.NoError(t, err)
	return d
}

func items(cs []mcpserver.Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Kind+" "+c.Caller+" "+c.Item)
	}
	return out
}

// TestPolicyDiffFindsEachWidening changes one thing at a time; each must
// show as a widening one way and a narrowing the other.
func TestPolicyDiffFindsEachWidening(t *testing.T) {
	cases := []struct{ name, narrow, wide, want string }{
		{"tool allowed", "policy: {allow: [read_file]}\n", "policy: {allow: [read_file, delete_file]}\n", "tool local delete_file"},
		{"tool no longer denied", "policy: {deny: [read_file]}\n", "", "tool local read_file"},
		{"approval allow", "", "approval: {modes: {write_file: allow}}\n", "tool local write_file"},
		{"approval no longer deny", "approval: {modes: {read_file: deny}}\n", "", "tool local read_file"},
		{"identity rule lifted", "identities: [{name: c, match: {groups: [g]}, deny: [read_file]}]\n",
			"identities: [{name: c, match: {groups: [g]}}]\n", "tool identities[c] read_file"},
		{"capability granted", "capabilities: {grant: [fs:read:src/**]}\n", "capabilities: {grant: [fs:read:**]}\n", "capability  fs:read:**"},
		{"capability deny lifted", "capabilities: {deny: [fs:write:secret/**]}\n", "", "capability  fs:write:secret/**"},
		{"limit raised", "limits: {max_calls_per_session: 10}\n", "limits: {max_calls_per_session: 20}\n", "limit  limits.max_calls_per_session"},
		{"limit turned off", "limits: {budget: 10}\n", "", "limit  limits.budget"},
		{"redaction off", "", "output_filter: {disable_redaction: true}\n", "output_filter  output_filter.disable_redaction"},
		{"invisible kept", "", "output_filter: {keep_invisible: true}\n", "output_filter  output_filter.keep_invisible"},
		{"secret files lifted", "", "capabilities: {allow_secret_files: true}\n", "secret_files  capabilities.allow_secret_files"},
		{"exec workspace writable", "", "exec: {workspace_writable: true}\n", "exec  exec.workspace_writable"},
		{"http remote", "", "http: {allow_remote: true}\n", "http  http.allow_remote"},
		{"metrics remote", "", "metrics: {addr: \"0.0.0.0:9464\", allow_remote: true}\n", "metrics  metrics.allow_remote"},
		{"pins weaker", "upstream_pins: block\n", "upstream_pins: warn\n", "upstream  upstream_pins"},
		{"argument secrets redacted", "", "arguments: {secrets: redact}\n", "arguments  arguments.secrets"},
		{"argument markers allowed", "", "arguments: {markers: allow}\n", "arguments  arguments.markers"},
		{"taint off", "", "policy: {taint: \"off\"}\n", "policy  policy.taint"},
		{"taint asks instead of refusing", "policy: {taint: refuse}\n", "", "policy  policy.taint"},
		{"private tool no longer private", "policy: {private_tools: [\"gh__*\"]}\n", "", "policy  policy.private_tools \"gh__*\""},
		{"argument secrets allowed for a tool", "", "arguments: {tools: {write_file: {secrets: allow}}}\n", "arguments  arguments.tools.write_file.secrets"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			up := diffOf(t, c.narrow, c.wide)
			require.Contains(t, items(up.Widenings), c.want)
			down := diffOf(t, c.wide, c.narrow)
			require.Contains(t, items(down.Narrowings), c.want)
			require.NotContains(t, items(down.Widenings), c.want)
		})
	}
}

// TestPolicyDiffIdenticalIsEmpty: a config against itself changes nothing.
func TestPolicyDiffIdenticalIsEmpty(t *testing.T) {
	body := "policy: {allow: [read_file, write_file]}\napproval: {modes: {write_file: allow}}\n" +
		"identities: [{name: c, match: {groups: [g]}, allow: [read_file]}]\n"
	d := diffOf(t, body, body)
	require.Empty(t, d.Widenings)
	require.Empty(t, d.Narrowings)
	require.Contains(t, d.Callers, "identities[c]")
}

// TestPolicyDiffUpstreamByConfig: an upstream is compared by its config,
// and the allow globs that name its tools, without connecting.
func TestPolicyDiffUpstreamByConfig(t *testing.T) {
	up := "upstreams: [{name: files, command: [/bin/true], sandbox: false}]\n"
	d := diffOf(t, "", up+"policy: {allow: [files__*]}\n")
	require.Contains(t, items(d.Widenings), "upstream  upstreams[files]")
	require.Contains(t, items(d.Widenings), `upstream  upstreams[files] tools allowed by policy.allow "files__*"`)
}

// TestPolicyDiffNetworkHosts: a host added to an egress allow list and a
// new brokered credential are widenings, named by host and header only.
func TestPolicyDiffNetworkHosts(t *testing.T) {
	t.Setenv("PYPI_TOKEN", "secret-value-never-shown")
	d := diffOf(t, "exec:\n  network:\n    allow: [\"pypi.org:443\"]\n",
		"exec:\n  network:\n    allow: [\"pypi.org:443\", \"files.pythonhosted.org:443\"]\n    credentials:\n      - {host: pypi.org, header: Authorization, value_env: PYPI_TOKEN, placeholder: TOOLWARDEN_PYPI}\n")
	require.Contains(t, items(d.Widenings), `network  exec.network.allow "files.pythonhosted.org:443"`)
	require.Contains(t, items(d.Widenings), `network  exec.network.credentials "pypi.org Authorization"`)
	back := diffOf(t, "exec:\n  network:\n    allow: [\"pypi.org:443\"]\n", "exec:\n  network:\n    allow: []\n")
	require.Contains(t, items(back.Narrowings), `network  exec.network.allow "pypi.org:443"`)
}

// TestPolicyDiffDLPOff: turning a served block's data-loss checks off is
// a widening, on again a narrowing.
func TestPolicyDiffDLPOff(t *testing.T) {
	on := "exec:\n  network:\n    allow: [\"pypi.org:443\"]\n"
	off := on + "    dlp:\n      off: true\n"
	require.Contains(t, items(diffOf(t, on, off).Widenings), "network  exec.network.dlp.off")
	require.Contains(t, items(diffOf(t, off, on).Narrowings), "network  exec.network.dlp.off")
}
