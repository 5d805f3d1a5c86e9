package fs_test

import (
	"context"
	iofs "io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// TestStoppedCallsChangeNothing: a write whose call is past its deadline
// or cancelled before it commits leaves the workspace exactly as it was
// and says why, so the server's audit line (failed, limit.timeout) is
// true.
func TestStoppedCallsChangeNothing(t *testing.T) {
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"write_file", map[string]any{"path": "new.txt", "content": "late"}},
		{"write_file", map[string]any{"path": "old.txt", "content": "late"}},
		{"write_file", map[string]any{"path": "x/y/new.txt", "content": "late", "create_dirs": true}},
		{"edit_file", map[string]any{"path": "old.txt", "edits": edits("old", "late")}},
		{"create_directory", map[string]any{"path": "newdir"}},
		{"move_file", map[string]any{"source": "old.txt", "destination": "moved.txt"}},
		{"delete_file", map[string]any{"path": "old.txt"}},
	}
	expired, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	t.Cleanup(cancel)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, stop := range []struct {
		ctx  context.Context
		code toolerr.Code
	}{{expired, toolerr.Timeout}, {cancelled, toolerr.Canceled}} {
		for _, c := range calls {
			t.Run(c.tool+"/"+string(stop.code), func(t *testing.T) {
				f := newFixture(t)
				f.write("old.txt", "old content\n")
				before := tree(t, f.dir)
				e := resultError(t, f.callCtx(stop.ctx, c.tool, c.args))
				require.Equal(t, stop.code, e.Code, e.Message)
				require.Contains(t, e.Message, "was not made")
				require.Equal(t, before, tree(t, f.dir), "the workspace is unchanged")
				f.requireNoTemp()
			})
		}
	}
}

// tree maps every path under dir to its content ("/" for a directory).
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() {
			out[p] = "/"
			return nil
		}
		data, err := os.ReadFile(p)
		out[p] = string(data)
		return err
	}))
	return out
}
