package toolsnaps

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
)

// inTempDir runs the test in an empty directory with the given CI and
// UPDATE_TOOLSNAPS values.
func inTempDir(t *testing.T, ci, update string) {
	t.Chdir(t.TempDir())
	t.Setenv("CI", ci)
	t.Setenv("UPDATE_TOOLSNAPS", update)
}

func tool(desc string) mcp.Tool {
	return mcp.NewTool("read_thing", mcp.WithDescription(desc))
}

func TestMissingSnapshotFailsInCI(t *testing.T) {
	inTempDir(t, "true", "")
	require.ErrorContains(t, Test(tool("Reads.")), "UPDATE_TOOLSNAPS=true")
	require.NoFileExists(t, filepath.Join(Dir, "read_thing.snap"))
}

func TestMissingSnapshotIsWrittenOutsideCI(t *testing.T) {
	inTempDir(t, "", "")
	require.NoError(t, Test(tool("Reads.")))
	require.FileExists(t, filepath.Join(Dir, "read_thing.snap"))
	require.NoError(t, Test(tool("Reads.")))
}

func TestChangedToolFailsUntilUpdated(t *testing.T) {
	inTempDir(t, "", "")
	require.NoError(t, Test(tool("Reads.")))
	require.ErrorContains(t, Test(tool("Reads more.")), "differs")
	t.Setenv("UPDATE_TOOLSNAPS", "true")
	require.NoError(t, Test(tool("Reads more.")))
	t.Setenv("UPDATE_TOOLSNAPS", "")
	require.NoError(t, Test(tool("Reads more.")))
}

func TestOrphanedSnapshotFails(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		inTempDir(t, ci, "")
		require.NoError(t, os.MkdirAll(Dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(Dir, "gone_tool.snap"), []byte("{}\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(Dir, "read_thing.snap"), []byte("{}\n"), 0o644))
		require.ErrorContains(t, Orphans([]string{"read_thing"}), "gone_tool.snap", "CI=%q", ci)
		require.NoError(t, Orphans([]string{"read_thing", "gone_tool"}))
	}
}

func TestUpdateDeletesOrphans(t *testing.T) {
	inTempDir(t, "", "true")
	require.NoError(t, os.MkdirAll(Dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(Dir, "gone_tool.snap"), []byte("{}\n"), 0o644))
	require.NoError(t, Orphans(nil))
	require.NoFileExists(t, filepath.Join(Dir, "gone_tool.snap"))
}
