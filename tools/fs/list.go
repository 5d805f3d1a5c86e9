package fs

import (
	"context"
	"io/fs"
	"time"

	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/internal/workspacepath"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools"
)

// Entry describes one file system entry.
type Entry struct {
	Path string `json:"path" jsonschema:"Path relative to the workspace root"`
	Type string `json:"type" jsonschema:"file, directory, symlink or other"`
	Size int64  `json:"size,omitempty" jsonschema:"Size in bytes, for files"`
}

// ListDirectoryIn is list_directory's input.
type ListDirectoryIn struct {
	Path string `json:"path,omitempty" jsonschema:"Directory relative to the workspace root (default \".\", the root)"`
}

// ListOut is the output of list_directory and directory_tree.
type ListOut struct {
	Path      string  `json:"path" jsonschema:"The directory that was listed"`
	Entries   []Entry `json:"entries" jsonschema:"Entries sorted by path"`
	Truncated bool    `json:"truncated" jsonschema:"True when the entry cap was reached"`
}

const listDirectoryDesc = `List the entries of one workspace directory (not recursive).

When to use: to discover what files exist before reading them; use directory_tree for several levels, search_files to find files by name pattern.

Parameters:
- path: directory relative to the workspace root; default "." (the root).

Returns: entries sorted by name, each with path (relative to the workspace root), type (file, directory, symlink, other) and size for files; truncated when fs.max_tree_entries was reached.

Errors: not_found; invalid_argument.not_a_directory; invalid_argument.path_outside_workspace.

Side effects: none (read-only).

Example: {"path": "src"}`

func (s *Set) listDirectory() tools.Tool {
	return tools.New("list_directory", listDirectoryDesc,
		tools.Annotations{Title: "List directory", ReadOnly: true, Idempotent: true}, readMeta,
		func(ctx context.Context, in ListDirectoryIn) (ListOut, error) {
			return s.walk(ctx, orRoot(in.Path), 1)
		})
}

// TreeIn is directory_tree's input.
type TreeIn struct {
	Path     string `json:"path,omitempty" jsonschema:"Directory relative to the workspace root (default \".\")"`
	MaxDepth int    `json:"max_depth,omitempty" jsonschema:"Levels to descend, 1 = direct children (default and maximum: fs.max_tree_depth)"`
}

const directoryTreeDesc = `List a workspace directory recursively, as a flat list of entries.

When to use: to get an overview of a project's layout. For one level use list_directory; to find files by pattern use search_files.

Parameters:
- path: directory relative to the workspace root; default ".".
- max_depth: levels to descend (1 = direct children); default and maximum fs.max_tree_depth.

Returns: entries in walk order (path relative to the workspace root, type, size); truncated when fs.max_tree_entries was reached. Symlinked directories are listed but not entered; .git directories are listed but not entered.

Errors: not_found; invalid_argument.not_a_directory; invalid_argument.path_outside_workspace.

Side effects: none (read-only).

Example: {"path": ".", "max_depth": 2}`

func (s *Set) directoryTree() tools.Tool {
	return tools.New("directory_tree", directoryTreeDesc,
		tools.Annotations{Title: "Directory tree", ReadOnly: true, Idempotent: true}, treeMeta,
		func(ctx context.Context, in TreeIn) (ListOut, error) {
			depth := in.MaxDepth
			if depth <= 0 || depth > s.limits.MaxTreeDepth {
				depth = s.limits.MaxTreeDepth
			}
			return s.walk(ctx, orRoot(in.Path), depth)
		})
}

// walk lists dir down to depth levels, capped at MaxTreeEntries.
func (s *Set) walk(ctx context.Context, dir string, depth int) (ListOut, error) {
	rel, err := s.dir(dir)
	if err != nil {
		return ListOut{}, err
	}
	out := ListOut{Path: rel, Entries: []Entry{}}
	err = fs.WalkDir(s.ws.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return toolerr.Wrap(ctx.Err(), toolerr.Canceled, "", "listing %q was cancelled", rel)
		}
		if p == rel {
			return nil
		}
		if sandbox.IsTempName(d.Name()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if len(out.Entries) >= s.limits.MaxTreeEntries {
			out.Truncated = true
			return fs.SkipAll
		}
		out.Entries = append(out.Entries, entryOf(p, d))
		if d.IsDir() && (levels(rel, p) >= depth || d.Name() == ".git") {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return ListOut{}, sandbox.MapError(rel, err)
	}
	return out, nil
}

// dir cleans p and checks that it names a directory.
func (s *Set) dir(p string) (string, error) {
	rel, err := workspacepath.Clean(p)
	if err != nil {
		return "", err
	}
	fi, err := s.ws.Stat(rel)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", toolerr.New(toolerr.NotADirectory, "Use read_file or file_info for files.", "%q is not a directory", rel)
	}
	return rel, nil
}

func levels(root, p string) int {
	if root == "." {
		return depthOf(p)
	}
	return depthOf(p) - depthOf(root)
}

func depthOf(p string) int {
	n := 1
	for _, c := range p {
		if c == '/' {
			n++
		}
	}
	return n
}

func entryOf(p string, d fs.DirEntry) Entry {
	e := Entry{Path: p, Type: typeOf(d.Type())}
	if d.Type().IsRegular() {
		if fi, err := d.Info(); err == nil {
			e.Size = fi.Size()
		}
	}
	return e
}

func typeOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	}
	return "other"
}

// FileInfoIn is file_info's input.
type FileInfoIn struct {
	Path string `json:"path" jsonschema:"Path relative to the workspace root"`
}

// FileInfoOut is file_info's output.
type FileInfoOut struct {
	Path     string `json:"path"`
	Type     string `json:"type" jsonschema:"file, directory, symlink or other"`
	Size     int64  `json:"size"`
	Mode     string `json:"mode" jsonschema:"Unix permission bits, e.g. -rw-r--r--"`
	Modified string `json:"modified" jsonschema:"Last modification time, RFC 3339"`
}

const fileInfoDesc = `Show metadata of one workspace file or directory, without reading it.

When to use: to check that a path exists, its type, size or modification time before reading or editing it.

Parameters:
- path (required): relative to the workspace root.

Returns: path, type (file, directory, symlink, other; a symlink is reported as itself, not followed), size in bytes, mode (e.g. -rw-r--r--), modified (RFC 3339).

Errors: not_found; invalid_argument.path_outside_workspace.

Side effects: none (read-only).

Example: {"path": "go.mod"}`

func (s *Set) fileInfo() tools.Tool {
	return tools.New("file_info", fileInfoDesc,
		tools.Annotations{Title: "File info", ReadOnly: true, Idempotent: true}, readMeta,
		func(ctx context.Context, in FileInfoIn) (FileInfoOut, error) {
			rel, err := workspacepath.Clean(in.Path)
			if err != nil {
				return FileInfoOut{}, err
			}
			fi, err := s.ws.Lstat(rel)
			if err != nil {
				return FileInfoOut{}, err
			}
			return FileInfoOut{Path: rel, Type: typeOf(fi.Mode().Type()), Size: fi.Size(),
				Mode: fi.Mode().Perm().String(), Modified: fi.ModTime().UTC().Format(time.RFC3339)}, nil
		})
}
