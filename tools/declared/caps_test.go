package declared

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/capability"
)

// A filepath param is a read of that workspace path, so a cli tool needs
// fs:read on it like read_file does: a policy that denies fs:read:**/*.pem
// must not let grep_code read k.pem. The tool's program and any
// capabilities the operator lists are still needed too.
func TestCLIFilepathParamsNeedFSRead(t *testing.T) {
	deny, err := capability.Parse("fs:read:**/*.pem")
	require.NoError(t, err)
	listed := grepDecl
	listed.Capabilities = []string{"proc:exec:/usr/bin/grep"}
	for name, d := range map[string]configs.DeclaredTool{"default capabilities": grepDecl, "listed capabilities": listed} {
		t.Run(name, func(t *testing.T) {
			tool := CLI{Workspace: workspace(t)}.Tool(d)
			info := &guard.ToolInfo{Name: d.Name, Capabilities: tool.Meta.Capabilities, PathArgs: tool.Meta.PathArgs}
			needs, terr := guard.Needs(info, map[string]any{"mode": "-F", "query": "BEGIN", "file": "keys/k.pem"})
			require.Nil(t, terr)
			require.True(t, slices.ContainsFunc(needs, func(c capability.Capability) bool { return capability.Denies(deny, c) }),
				"needs %v: the deny on *.pem applies", needs)
			require.Contains(t, tool.Meta.Capabilities, "proc:exec:/usr/bin/grep")
		})
	}
}
