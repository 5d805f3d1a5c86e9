package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// egressExampleConfig is docs/egress.md's example of network blocks:
// exec.network for run_script and run_command, a declared cli tool with
// its own block, and a caller whose net:connect leaves one host out.
const egressExampleConfig = `policy:
  allow: [run_script, run_command, gh_issues]
exec:
  interpreters: [python]
  network:
    allow: ["pypi.org:443", "files.pythonhosted.org:443", "api.github.com:443"]
    credentials:
      - host: api.github.com
        header: Authorization
        value_env: GITHUB_TOKEN
        placeholder: TOOLWARDEN_GITHUB
tools:
  - name: gh_issues
    description: A repository's open issues, as JSON.
    type: cli
    command: [curl, -sf, "https://api.github.com/repos/{repo}/issues"]
    params:
      - {name: repo, type: string, required: true, max_length: 100}
    network:
      allow: ["api.github.com:443"]
      credentials:
        - {host: api.github.com, header: Authorization, value_env: GITHUB_TOKEN, placeholder: TOOLWARDEN_GITHUB}
identities:
  - name: ci
    match: {identities: [ci]}
    revoke: ["net:connect:api.github.com:*"]
`

// TestEgressConfigCheckAndExplain: through the built binary, config check
// shows each tool's network block under the tool (hosts, brokered hosts
// by header name, never the value), and policy explain shows the hosts
// a caller's run could reach (the allow list ∩ its net:connect), for
// run_script and a cli tool. docs/egress.md shows this very output.
func TestEgressConfigCheckAndExplain(t *testing.T) {
	const value = "ghp_real-value-never-printed-81f0"
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "toolwarden.yaml"), []byte(egressExampleConfig), 0o600))
	_, env := workspace(t)
	env = append(env, "GITHUB_TOKEN="+value)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(binary, args...)
		cmd.Dir, cmd.Env = dir, env
		out, _ := cmd.Output() // policy explain exits 2 for a denial
		require.NotContains(t, string(out), value, "no output holds the credential's value")
		return string(out)
	}
	doc, err := os.ReadFile("../docs/egress.md")
	require.NoError(t, err)
	require.Contains(t, string(doc), "```yaml\n"+egressExampleConfig+"```\n", "docs/egress.md shows the example config")

	check := run("config", "check")
	i := strings.Index(check, "\nnetwork:\n")
	require.Positive(t, i, check)
	section := check[i+1:]
	section = section[:strings.Index(section, "\nshared_state:")+1]
	require.Contains(t, section, "  gh_issues:\n    block: tools[0].network\n    allow:\n      - api.github.com:443\n    brokered:\n      - api.github.com Authorization\n")
	require.Contains(t, section, "  run_script:\n    block: exec.network\n")
	require.Contains(t, section, "  run_command:\n    block: exec.network\n")
	require.Contains(t, string(doc), "```text\n$ toolwarden config check\n...\n"+section+"...\n```\n",
		"docs/egress.md must show the binary's network section (regenerate it)")

	explain := func(cmdline string, args ...string) string {
		out := run(append([]string{"policy", "explain"}, args...)...)
		require.Contains(t, string(doc), "```text\n$ toolwarden policy explain "+cmdline+"\n"+out+"```\n",
			"docs/egress.md must show the binary's explanation (regenerate it)")
		return out
	}
	local := explain(`run_script '{"interpreter":"python","script":"..."}'`, "run_script", `{"interpreter":"python","script":"..."}`)
	require.Contains(t, local, "run_script: needs_approval")
	require.Contains(t, local, "network (exec.network.allow ∩ the caller's net:connect):\n"+
		"  reachable  pypi.org:443 (rule capabilities.granted)\n"+
		"  reachable  files.pythonhosted.org:443 (rule capabilities.granted)\n"+
		"  reachable  api.github.com:443 (rule capabilities.granted), credential brokered into Authorization\n")
	ci := explain(`--as identity=ci gh_issues '{"repo":"octo/hello"}'`, "--as", "identity=ci", "gh_issues", `{"repo":"octo/hello"}`)
	require.Contains(t, ci, "network (tools[0].network.allow ∩ the caller's net:connect):\n"+
		`  refused    api.github.com:443 (rule identities[ci].revoke:"net:connect:api.github.com:*"), credential brokered into Authorization`+"\n")
}
