package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// shippedConfigs are the example configs policy diff is shown against
// the default in docs/policy.md, relative to the repository root.
func shippedConfigs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../configs/examples/*.yaml")
	require.NoError(t, err)
	files = append(files, "../configs/examples/declared/toolwarden.yaml")
	for i, f := range files {
		files[i] = strings.TrimPrefix(f, "../")
	}
	return files
}

// diffFromRoot runs policy diff from the repository root, as the docs do.
func diffFromRoot(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"policy", "diff"}, args...)...)
	cmd.Dir, cmd.Env = "..", env
	out, err := cmd.Output()
	if e, ok := err.(*exec.ExitError); ok {
		return string(out), e.ExitCode()
	}
	require.NoError(t, err)
	return string(out), 0
}

// TestPolicyDiffShippedConfigs: every shipped example against the
// default; exit 0 without --fail-on-widening, 1 with it when the example
// widens, the JSON shape, and docs/policy.md shows the binary's output.
func TestPolicyDiffShippedConfigs(t *testing.T) {
	t.Parallel()
	_, env := workspace(t)
	doc, err := os.ReadFile("../docs/policy.md")
	require.NoError(t, err)
	for _, file := range shippedConfigs(t) {
		out, status := diffFromRoot(t, env, "configs/default.yaml", file)
		require.Equal(t, 0, status, out)
		block := "```text\n$ toolwarden policy diff configs/default.yaml " + file + "\n" + out + "```\n"
		require.Contains(t, string(doc), block, "docs/policy.md must show the binary's diff of %s (regenerate it)", file)

		js, status := diffFromRoot(t, env, "--json", "--fail-on-widening", "configs/default.yaml", file)
		var d struct {
			Old, New              string
			Callers               []string
			Tools                 int
			Widenings, Narrowings []struct{ Kind, Caller, Item, Old, New, Rule string }
			Notes                 []string
		}
		require.NoError(t, json.Unmarshal([]byte(js), &d), js)
		require.Equal(t, "configs/default.yaml", d.Old)
		require.Equal(t, file, d.New)
		require.Contains(t, d.Callers, "local")
		require.Positive(t, d.Tools)
		require.NotEmpty(t, d.Notes)
		want := 0
		if len(d.Widenings) > 0 {
			want = 1
		}
		require.Equal(t, want, status, "--fail-on-widening exits 1 exactly when there is a widening")
	}
	out, status := diffFromRoot(t, env, "--fail-on-widening", "configs/default.yaml", "configs/default.yaml")
	require.Equal(t, 0, status, out)
	require.Contains(t, out, "widenings: 0\n")
}

// TestPolicyDiffUnusableInput: a config that does not load exits 2 naming
// file:line: key: reason.
func TestPolicyDiffUnusableInput(t *testing.T) {
	t.Parallel()
	_, env := workspace(t)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("limits:\n  max_calls_per_session: lots\n"), 0o600))
	cmd := exec.Command(binary, "policy", "diff", "../configs/default.yaml", bad)
	cmd.Env = env
	msg, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, 2, exit.ExitCode(), string(msg))
	require.Contains(t, string(msg), "bad.yaml:2: limits.max_calls_per_session")
}
