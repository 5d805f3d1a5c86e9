// Package sandbox confines what tools touch: file access to the workspace
// through os.Root, and processes (run_script, run_command, declared cli
// tools) to a gVisor or bubblewrap sandbox.
//
// Every path from the model goes through workspacepath.Clean first, then
// through an os.Root opened on the workspace directory, so neither "..",
// absolute paths nor symlinks can reach a file outside it.
package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// Workspace is a directory the tools are confined to.
type Workspace struct {
	dir  string
	root *os.Root
}

// Open opens the workspace at dir, which must be an existing directory.
func Open(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	return &Workspace{dir: abs, root: root}, nil
}

// Dir returns the absolute workspace directory.
func (w *Workspace) Dir() string { return w.dir }

// Close releases the workspace's directory handle.
func (w *Workspace) Close() error { return w.root.Close() }

// FS returns a read-only file system view of the workspace.
func (w *Workspace) FS() fs.FS { return w.root.FS() }

// Lstat returns information on the named file without following a final symlink.
func (w *Workspace) Lstat(rel string) (fs.FileInfo, error) {
	fi, err := w.root.Lstat(rel)
	return fi, mapErr(rel, err)
}

// Stat returns information on the named file, following symlinks inside the workspace.
func (w *Workspace) Stat(rel string) (fs.FileInfo, error) {
	fi, err := w.root.Stat(rel)
	return fi, mapErr(rel, err)
}

// Open opens the named file for reading. O_NONBLOCK keeps a FIFO planted
// in the workspace from blocking the call; it changes nothing for files.
func (w *Workspace) Open(rel string) (*os.File, error) {
	f, err := w.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	return f, mapErr(rel, err)
}

// ReadDir lists a directory, sorted by name.
func (w *Workspace) ReadDir(rel string) ([]fs.DirEntry, error) {
	entries, err := fs.ReadDir(w.root.FS(), rel)
	return entries, mapErr(rel, err)
}

// ReadFileLimited reads at most limit bytes of the named regular file and
// reports whether the file was longer.
func (w *Workspace) ReadFileLimited(rel string, limit int64) ([]byte, bool, error) {
	f, err := w.Open(rel)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, mapErr(rel, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, false, toolerr.New(toolerr.NotAFile, "Use list_directory for directories.",
			"%q is not a regular file", rel)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, false, mapErr(rel, err)
	}
	if int64(len(data)) > limit {
		return data[:limit], true, nil
	}
	return data, false, nil
}

// MkdirAll creates a directory and its parents.
func (w *Workspace) MkdirAll(rel string) error {
	return mapErr(rel, w.root.MkdirAll(rel, 0o755))
}

// Rename moves oldRel to newRel, refusing to replace an existing file.
func (w *Workspace) Rename(oldRel, newRel string) error {
	if _, err := w.root.Lstat(newRel); err == nil {
		return toolerr.New(toolerr.AlreadyExists, "Choose another destination or delete it first.",
			"destination %q already exists", newRel)
	}
	err := w.root.Rename(oldRel, newRel)
	rel := oldRel
	if err != nil && (isEscape(err) || errors.Is(err, syscall.ELOOP)) {
		if _, serr := w.root.Lstat(oldRel); serr == nil {
			rel = newRel // the source is reachable, so the destination is at fault
		}
	}
	return mapErr(rel, err)
}

// Remove deletes a file or an empty directory.
func (w *Workspace) Remove(rel string) error {
	err := w.root.Remove(rel)
	if err != nil && errors.Is(err, syscall.ENOTEMPTY) {
		return toolerr.New(toolerr.InvalidArgument, "Delete the directory's contents first; recursive deletion is not offered.",
			"directory %q is not empty", rel)
	}
	return mapErr(rel, err)
}

// MapError turns an error from the workspace's file system into a coded
// error the model can act on; coded errors pass through unchanged.
func MapError(rel string, err error) error {
	var te *toolerr.Error
	if errors.As(err, &te) {
		return te
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path != "" {
		rel = pe.Path
	}
	return mapErr(rel, err)
}

// mapErr turns file system errors into coded errors the model can act on.
func mapErr(rel string, err error) error {
	switch {
	case err == nil:
		return nil
	case isEscape(err):
		return toolerr.Wrap(err, toolerr.PathSymlinkEscape, "Symlinks that leave the workspace are not followed; use a path inside it.",
			"path %q resolves outside the workspace (through a symlink)", rel).WithRule("path.symlink_inside_workspace")
	case errors.Is(err, syscall.ELOOP):
		return toolerr.Wrap(err, toolerr.PathInvalid, "The path runs through a loop of symlinks (or too many links); use the real path of the file.",
			"path %q does not resolve: too many levels of symbolic links", rel).WithRule("path.symlink_loop")
	case errors.Is(err, fs.ErrNotExist):
		return toolerr.Wrap(err, toolerr.NotFound, "Check the path with list_directory or search_files.",
			"%q does not exist in the workspace", rel)
	case errors.Is(err, fs.ErrExist):
		return toolerr.Wrap(err, toolerr.AlreadyExists, "Choose another name.", "%q already exists", rel)
	case errors.Is(err, syscall.ENOTDIR):
		return toolerr.Wrap(err, toolerr.NotADirectory, "A component of the path is a file, not a directory.",
			"%q is not under a directory", rel)
	case errors.Is(err, syscall.EISDIR):
		return toolerr.Wrap(err, toolerr.NotAFile, "Use list_directory for directories.", "%q is a directory", rel)
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return toolerr.Wrap(err, toolerr.IO, "The disk holding the workspace is full (or over quota); ask the user to free space, then retry. Nothing was changed.",
			"no space left on the workspace's disk for %q", rel).WithRule("io.disk_full")
	case errors.Is(err, syscall.EROFS), errors.Is(err, syscall.EIO):
		return toolerr.Wrap(err, toolerr.IO, "The workspace's file system refused the operation; tell the user. Nothing was changed.",
			"the workspace's file system failed on %q: %s", rel, errnoText(err)).WithRule("io.filesystem")
	case errors.Is(err, fs.ErrPermission):
		return toolerr.Wrap(err, toolerr.InvalidArgument, "The server's user may not access this file.",
			"permission denied for %q", rel)
	}
	return toolerr.Wrap(err, toolerr.Internal, "This is a server fault; retrying will not help.",
		"file operation on %q failed", rel)
}

// errnoText is the system's words for err's errno, without paths.
func errnoText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return "unknown error"
}

// isEscape reports whether err is os.Root's refusal to leave its directory.
// The os package does not export that error, so its text is the only handle.
func isEscape(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.Contains(e.Error(), "path escapes from parent") {
			return true
		}
	}
	return false
}
