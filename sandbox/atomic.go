package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
)

// tempPrefix marks the temporary files of atomic writes; tools hide them.
const tempPrefix = ".toolwarden-tmp-"

// IsTempName reports whether name is a temporary file of an atomic write.
func IsTempName(name string) bool { return strings.HasPrefix(name, tempPrefix) }

// WriteFileAtomic replaces (or creates) the named file with data.
//
// The data goes to a new temporary file in the same directory, created with
// O_EXCL so that no existing file or link is opened, and is then renamed over
// the target. A symlink or hard link at the target is replaced, never written
// through, so it cannot redirect the write outside the workspace; a failed
// write leaves the old file intact. A symlink that leads out of the
// workspace (even to nothing) or into a loop is refused instead: it is the
// operator's, and replacing it would silently undo their link (see
// checkLink). The rename commits the write: when ctx has ended by then,
// the temporary file is removed, the target is left as it was and ctx's
// error is returned, so a stopped call changes nothing.
func (w *Workspace) WriteFileAtomic(ctx context.Context, rel string, data []byte) error {
	perm := fs.FileMode(0o644)
	if fi, err := w.root.Lstat(rel); err == nil {
		switch {
		case fi.IsDir():
			return mapErr(rel, &fs.PathError{Op: "write", Path: rel, Err: syscall.EISDIR})
		case fi.Mode().IsRegular():
			perm = fi.Mode().Perm()
		case fi.Mode()&fs.ModeSymlink != 0:
			if err := w.checkLink(rel); err != nil {
				return err
			}
		}
	}
	// The writer's pid in the name lets the next start tell a killed
	// writer's leftover from a live one's (RemoveLeftovers).
	tmp := path.Join(path.Dir(rel), tempPrefix+strconv.Itoa(os.Getpid())+"-"+randomSuffix())
	f, err := w.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return mapErr(rel, err)
	}
	if err := writeAndSync(f, data); err != nil {
		_ = w.root.Remove(tmp)
		return mapErr(rel, err)
	}
	if err := ctx.Err(); err != nil {
		_ = w.root.Remove(tmp)
		return err
	}
	if err := w.root.Rename(tmp, rel); err != nil {
		_ = w.root.Remove(tmp)
		return mapErr(rel, err)
	}
	return nil
}

func writeAndSync(f *os.File, data []byte) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func randomSuffix() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// checkLink refuses a write onto the symlink rel when the link leads out of
// the workspace, existing target or not (path.symlink_inside_workspace),
// or into a loop (path.symlink_loop). A link to a place inside, even one
// that does not exist yet, is replaced like any file: the guard has checked
// both the link's path and its target's.
func (w *Workspace) checkLink(rel string) error {
	_, err := w.root.Stat(rel)
	if err != nil && (isEscape(err) || errors.Is(err, syscall.ELOOP)) {
		return mapErr(rel, err)
	}
	return nil
}
