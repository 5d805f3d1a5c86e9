package sandbox

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// staleUnowned is how old a temporary file without a writer's pid in its
// name (written by an older toolwarden) must be to count as abandoned.
const staleUnowned = 10 * time.Minute

// RemoveLeftovers deletes the temporary files of atomic writes that a
// killed server left in the workspace (kill -9, a crash, power loss): the
// writer's pid is in each name, and a file whose writer is no longer
// running is removed. Files of live writers, including other servers on
// the same workspace, are kept. Symlinked directories are not followed,
// and removal goes through the workspace root. It returns the removed
// files' workspace-relative paths.
func (w *Workspace) RemoveLeftovers(ctx context.Context) ([]string, error) {
	var removed []string
	err := filepath.WalkDir(w.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable directory holds nothing of ours
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if d.IsDir() || !IsTempName(d.Name()) || !abandoned(d) {
			return nil
		}
		rel, err := filepath.Rel(w.dir, p)
		if err != nil {
			return nil
		}
		if err := w.root.Remove(rel); err == nil {
			removed = append(removed, rel)
		}
		return nil
	})
	return removed, err
}

// abandoned reports whether the temporary file d's writer is gone.
func abandoned(d fs.DirEntry) bool {
	pidText, _, ok := strings.Cut(strings.TrimPrefix(d.Name(), tempPrefix), "-")
	pid, err := strconv.Atoi(pidText)
	if !ok || err != nil || pid <= 0 {
		info, err := d.Info()
		return err == nil && time.Since(info.ModTime()) > staleUnowned
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
