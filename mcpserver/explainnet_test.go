package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/mcpserver"
	"github.com/toolwarden/toolwarden/tools/declared"
	"go.yaml.in/yaml/v3"
)

// netConfig gives run_script and run_command exec.network with one
// brokered host, and a declared cli tool its own block.
const netConfig = `policy:
  allow: [run_script, run_command, fetch_status]
exec:
  interpreters: [python]
  network:
    allow: ["pypi.org:443", "api.github.com:443", "*.example.com:443", "10.0.0.5:80"]
    credentials:
      - {host: api.github.com, header: Authorization, value_env: NETCHECK_TOKEN, placeholder: TOOLWARDEN_GITHUB}
tools:
  - name: fetch_status
    description: Fetch the status page.
    type: cli
    command: [curl, -s, https://status.example.org/]
    network:
      allow: ["status.example.org:443"]
identities:
  - name: ci
    match: {identities: [ci]}
    revoke: ["net:connect:api.github.com:*", "net:connect:*.example.com:*"]
`

// config check shows each tool's network block under the tool: the
// hosts, and the brokered ones by header name, never the value.
func TestConfigCheckShowsNetworkPerTool(t *testing.T) {
	t.Setenv("NETCHECK_TOKEN", "Bearer real-value-7c1d")
	var out bytes.Buffer
	require.NoError(t, mcpserver.CheckConfig(ctxT(t), loadDeclared(t, netConfig), &out))
	require.NotContains(t, out.String(), "real-value-7c1d")
	var got struct {
		Network map[string]mcpserver.ToolNetwork `yaml:"network"`
	}
	require.NoError(t, yaml.Unmarshal(out.Bytes(), &got), out.String())
	exec := mcpserver.ToolNetwork{Block: "exec.network",
		Allow:    []string{"pypi.org:443", "api.github.com:443", "*.example.com:443", "10.0.0.5:80"},
		Brokered: []string{"api.github.com Authorization"}}
	require.Equal(t, map[string]mcpserver.ToolNetwork{
		"run_script":   exec,
		"run_command":  exec,
		"fetch_status": {Block: "tools[0].network", Allow: []string{"status.example.org:443"}},
	}, got.Network, "a declared tool never inherits exec.network")

	out.Reset()
	require.NoError(t, mcpserver.CheckConfig(ctxT(t), loadYAML(t, "exec:\n  interpreters: [python]\n"), &out))
	require.NotContains(t, out.String(), "\nnetwork:", "no block, no network section")
}

// policy explain shows the hosts a caller could reach: the allow list
// intersected with its net:connect, each with the deciding rule.
func TestExplainShowsReachableHosts(t *testing.T) {
	t.Setenv("NETCHECK_TOKEN", "Bearer real-value-7c1d")
	l := loadDeclared(t, netConfig)
	explain := func(tool, as string) mcpserver.Explanation {
		t.Helper()
		var out bytes.Buffer
		_, err := mcpserver.ExplainPolicy(ctxT(t), l, mcpserver.ExplainRequest{Tool: tool, As: as, JSON: true,
			Args: json.RawMessage(`{"interpreter":"python","script":"pass"}`)}, &out)
		require.NoError(t, err)
		require.NotContains(t, out.String(), "real-value-7c1d")
		var e mcpserver.Explanation
		require.NoError(t, json.Unmarshal(out.Bytes(), &e), out.String())
		return e
	}
	local := explain("run_script", "")
	require.NotNil(t, local.Network)
	require.Equal(t, "exec.network", local.Network.Block)
	require.Equal(t, []mcpserver.HostReach{
		{Allow: "pypi.org:443", Reachable: true, Rule: "capabilities.granted"},
		{Allow: "api.github.com:443", Reachable: true, Rule: "capabilities.granted", Brokered: "Authorization"},
		{Allow: "*.example.com:443", Reachable: true, Rule: "capabilities.granted"},
		{Allow: "10.0.0.5:80", Reachable: true, Rule: "capabilities.granted"},
	}, local.Network.Hosts)

	ci := explain("run_script", "identity=ci")
	require.Equal(t, []mcpserver.HostReach{
		{Allow: "pypi.org:443", Reachable: true, Rule: "capabilities.granted"},
		{Allow: "api.github.com:443", Reachable: false, Rule: `identities[ci].revoke:"net:connect:api.github.com:*"`, Brokered: "Authorization"},
		{Allow: "*.example.com:443", Reachable: false, Rule: `identities[ci].revoke:"net:connect:*.example.com:*"`},
		{Allow: "10.0.0.5:80", Reachable: true, Rule: "capabilities.granted"},
	}, ci.Network.Hosts)

	cli := explain("fetch_status", "identity=ci")
	require.Equal(t, &mcpserver.NetworkReach{Block: "tools[0].network",
		Hosts: []mcpserver.HostReach{{Allow: "status.example.org:443", Reachable: true, Rule: "capabilities.granted"}}}, cli.Network)
	require.Nil(t, explain("read_file", "").Network, "a tool without network shows none")

	var text bytes.Buffer
	_, err := mcpserver.ExplainPolicy(ctxT(t), l, mcpserver.ExplainRequest{Tool: "run_script", As: "identity=ci",
		Args: json.RawMessage(`{"interpreter":"python","script":"pass"}`)}, &text)
	require.NoError(t, err)
	require.Contains(t, text.String(), "network (exec.network.allow ∩ the caller's net:connect):\n"+
		"  reachable  pypi.org:443 (rule capabilities.granted)\n"+
		"  refused    api.github.com:443 (rule identities[ci].revoke:\"net:connect:api.github.com:*\"), credential brokered into Authorization\n")

	// A call that would not run shows what its runs could reach, were it allowed.
	text.Reset()
	_, err = mcpserver.ExplainPolicy(ctxT(t), l, mcpserver.ExplainRequest{Tool: "run_script", Args: json.RawMessage(`{"script":"pass"}`)}, &text)
	require.NoError(t, err)
	require.Contains(t, text.String(), "run_script: denied")
	require.Contains(t, text.String(), "network (exec.network.allow ∩ the caller's net:connect, were the call allowed):\n")
}

// loadDeclared loads body as serve does, declared tools checked.
func loadDeclared(t *testing.T, body string) *configs.Loaded {
	t.Helper()
	file := filepath.Join(t.TempDir(), "toolwarden.yaml")
	require.NoError(t, os.WriteFile(file, []byte(body), 0o600))
	l, err := configs.Load(configs.Options{File: file, CheckTool: declared.Check})
	require.NoError(t, err)
	return l
}
