package e2e

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConfigCheckTakesPolicyFlags runs the binary: `config check --allow`
// was refused while `serve --allow` worked.
func TestConfigCheckTakesPolicyFlags(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	cmd := exec.Command(binary, "config", "check", "--workspace", ws, "--allow", "write_file", "--deny", "grep_files")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "- write_file")
	require.Regexp(t, `hidden_tools:(\n  - \w+)*\n  - grep_files`, string(out))
}
