package mcpserver

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// linkResolver returns the guard's ResolvePath for the workspace at dir:
// the workspace-relative path a path leads to through symlinks. A path
// that does not exist yet (a file about to be written) resolves through
// its deepest existing parent. It reports false for a path that leads out
// of the workspace or cannot be resolved: the tools' os.Root refuses
// those itself.
//
// dir is symlink-free (see workspaceDir), so a path none of whose own
// components is a link leads to itself: noLinks checks that with one
// Lstat per component of rel, instead of one per component of the whole
// absolute path, and only a path through a link takes the full walk.
func linkResolver(dir string) func(string) (string, bool) {
	return func(rel string) (string, bool) {
		if clean, ok := noLinks(dir, rel); ok {
			return clean, true
		}
		real, err := resolveExisting(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return "", false
		}
		return relInside(dir, real)
	}
}

// noLinks reports whether rel, below dir, names a path none of whose
// existing components is a symlink, with rel cleaned. A component that
// does not exist ends the walk (nothing below it can be a link); any
// other doubt (a link, "..", an error) answers false for the full walk.
func noLinks(dir, rel string) (string, bool) {
	clean := path.Clean(rel)
	if clean == "." {
		return clean, true
	}
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", false
	}
	// One string holds the whole path and each component's Lstat takes a
	// prefix of it, rather than a new string per component.
	full := dir + string(filepath.Separator) + filepath.FromSlash(clean)
	for end := len(dir) + 1; end <= len(full); end++ {
		if end < len(full) && full[end] != filepath.Separator {
			continue
		}
		info, err := os.Lstat(full[:end])
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return clean, true
		case err != nil || info.Mode()&fs.ModeSymlink != 0:
			return "", false
		}
	}
	return clean, true
}

// relInside returns path relative to dir, with forward slashes, when it is
// dir (".") or lies inside it.
func relInside(dir, path string) (string, bool) {
	r, err := filepath.Rel(dir, path)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// resolveExisting evaluates the symlinks of the longest existing prefix
// of p and appends the rest.
func resolveExisting(p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return real, err
	}
	parent := filepath.Dir(p)
	if parent == p {
		return "", err
	}
	r, err := resolveExisting(parent)
	if err != nil {
		return "", err
	}
	return filepath.Join(r, filepath.Base(p)), nil
}

// workspaceDir is the absolute, symlink-free directory sandbox.Open
// confines the tools to.
func workspaceDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		return resolved
	}
	return abs
}
