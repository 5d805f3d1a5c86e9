package fs

import (
	"context"
	"path"

	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/internal/workspacepath"
	"github.com/toolwarden/toolwarden/tools"
)

// WriteFileIn is write_file's input.
type WriteFileIn struct {
	Path       string `json:"path" jsonschema:"File path relative to the workspace root"`
	Content    string `json:"content" jsonschema:"The complete new text of the file"`
	CreateDirs bool   `json:"create_dirs,omitempty" jsonschema:"Create missing parent directories (default false)"`
}

// WriteFileOut is write_file's output.
type WriteFileOut struct {
	Path         string `json:"path"`
	BytesWritten int    `json:"bytes_written"`
	Created      bool   `json:"created" jsonschema:"True when the file did not exist before"`
}

const writeFileDesc = `Create a workspace file or replace its whole content.

When to use: to create a new file or rewrite a small one completely. To change part of an existing file prefer edit_file, which shows a diff.

Parameters:
- path (required): relative to the workspace root.
- content (required): the complete new text.
- create_dirs: create missing parent directories (default false).

Returns: path, bytes_written, created (true for a new file).

Errors: limit.too_large over fs.max_write_bytes; not_found when the parent directory is missing and create_dirs is false; invalid_argument.not_a_file when path is a directory; invalid_argument.path_outside_workspace; invalid_argument.path_symlink_escape when path is a symlink that leads outside the workspace (even to nothing); invalid_argument.path_invalid for a symlink loop.

Side effects: writes the file atomically (temporary file, then rename): readers never see half a file, a failed write leaves the old file intact, and a symlink inside the workspace or a hard link at path is replaced, not written through. Overwrites without asking: read the file first if unsure.

Example: {"path": "notes/todo.md", "content": "- ship it\n", "create_dirs": true}`

func (s *Set) writeFile() tools.Tool {
	return tools.New("write_file", writeFileDesc,
		tools.Annotations{Title: "Write file", Destructive: true, Idempotent: true},
		writeMeta(false, "path"),
		func(ctx context.Context, in WriteFileIn) (WriteFileOut, error) {
			rel, err := s.writable(in.Path, len(in.Content))
			if err != nil {
				return WriteFileOut{}, err
			}
			if in.CreateDirs {
				if err := live(ctx, rel); err != nil {
					return WriteFileOut{}, err
				}
				if err := s.ws.MkdirAll(path.Dir(rel)); err != nil {
					return WriteFileOut{}, err
				}
			}
			_, statErr := s.ws.Lstat(rel)
			if err := s.ws.WriteFileAtomic(ctx, rel, []byte(in.Content)); err != nil {
				return WriteFileOut{}, uncommitted(err, rel)
			}
			return WriteFileOut{Path: rel, BytesWritten: len(in.Content), Created: statErr != nil}, nil
		})
}

// writable cleans p and checks the size of what will be written.
func (s *Set) writable(p string, size int) (string, error) {
	rel, err := workspacepath.Clean(p)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", toolerr.New(toolerr.NotAFile, "Name a file inside the workspace.", "the workspace root is not a file")
	}
	if int64(size) > s.limits.MaxWriteBytes {
		return "", toolerr.New(toolerr.TooLarge, "Write smaller files.",
			"content is %d bytes; fs.max_write_bytes is %d", size, s.limits.MaxWriteBytes).WithRule("fs.max_write_bytes")
	}
	return rel, nil
}

// CreateDirIn is create_directory's input.
type CreateDirIn struct {
	Path string `json:"path" jsonschema:"Directory path relative to the workspace root"`
}

// CreateDirOut is create_directory's output.
type CreateDirOut struct {
	Path    string `json:"path"`
	Created bool   `json:"created" jsonschema:"False when it already existed"`
}

const createDirectoryDesc = `Create a workspace directory, with any missing parents.

When to use: before writing files into a new directory (or pass create_dirs to write_file).

Parameters:
- path (required): relative to the workspace root.

Returns: path, created (false when it already existed, which is not an error).

Errors: invalid_argument.not_a_directory when a file is in the way; invalid_argument.path_outside_workspace.

Side effects: creates directories (mode 0755).

Example: {"path": "docs/guides"}`

func (s *Set) createDirectory() tools.Tool {
	return tools.New("create_directory", createDirectoryDesc,
		tools.Annotations{Title: "Create directory", Idempotent: true},
		writeMeta(false, "path"),
		func(ctx context.Context, in CreateDirIn) (CreateDirOut, error) {
			rel, err := workspacepath.Clean(in.Path)
			if err != nil {
				return CreateDirOut{}, err
			}
			_, statErr := s.ws.Lstat(rel)
			if err := live(ctx, rel); err != nil {
				return CreateDirOut{}, err
			}
			if err := s.ws.MkdirAll(rel); err != nil {
				if toolerr.CodeOf(err) == toolerr.AlreadyExists {
					return CreateDirOut{}, toolerr.New(toolerr.NotADirectory, "A file is in the way: choose another name or delete it first.",
						"%q exists and is not a directory", rel)
				}
				return CreateDirOut{}, err
			}
			return CreateDirOut{Path: rel, Created: statErr != nil}, nil
		})
}

// MoveIn is move_file's input.
type MoveIn struct {
	Source      string `json:"source" jsonschema:"Existing path relative to the workspace root"`
	Destination string `json:"destination" jsonschema:"New path relative to the workspace root; must not exist"`
}

// MoveOut is move_file's output.
type MoveOut struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
}

const moveFileDesc = `Move or rename a workspace file or directory.

When to use: to rename a file or move it to another directory inside the workspace.

Parameters:
- source (required): existing path relative to the workspace root.
- destination (required): new path; it must not exist (nothing is overwritten) and its parent directory must exist.

Returns: source and destination as cleaned paths.

Errors: not_found for a missing source or destination parent; already_exists when destination exists; invalid_argument.path_outside_workspace.

Side effects: the entry disappears from source and appears at destination.

Example: {"source": "draft.md", "destination": "docs/final.md"}`

func (s *Set) moveFile() tools.Tool {
	return tools.New("move_file", moveFileDesc,
		tools.Annotations{Title: "Move file", Destructive: true},
		reading(subtree(writeMeta(false, "source", "destination")), "fs:read:{source}/**"),
		func(ctx context.Context, in MoveIn) (MoveOut, error) {
			src, err := workspacepath.Clean(in.Source)
			if err != nil {
				return MoveOut{}, err
			}
			dst, err := workspacepath.Clean(in.Destination)
			if err != nil {
				return MoveOut{}, err
			}
			if src == "." || dst == "." {
				return MoveOut{}, toolerr.New(toolerr.InvalidArgument, "Name entries inside the workspace.",
					"the workspace root cannot be moved or replaced")
			}
			if err := live(ctx, src); err != nil {
				return MoveOut{}, err
			}
			if err := s.ws.Rename(src, dst); err != nil {
				return MoveOut{}, err
			}
			return MoveOut{Source: src, Destination: dst}, nil
		})
}

// DeleteIn is delete_file's input.
type DeleteIn struct {
	Path string `json:"path" jsonschema:"File or empty directory relative to the workspace root"`
}

// DeleteOut is delete_file's output.
type DeleteOut struct {
	Path    string `json:"path"`
	Deleted bool   `json:"deleted"`
}

const deleteFileDesc = `Delete one workspace file, symlink or empty directory.

When to use: to remove a file you no longer need. There is no recursive delete: empty a directory file by file first.

Parameters:
- path (required): relative to the workspace root.

Returns: path, deleted.

Errors: not_found; invalid_argument when the directory is not empty; invalid_argument.path_outside_workspace.

Side effects: the entry is removed permanently (there is no trash). A symlink is removed itself, never its target.

Example: {"path": "tmp/output.log"}`

func (s *Set) deleteFile() tools.Tool {
	return tools.New("delete_file", deleteFileDesc,
		tools.Annotations{Title: "Delete file", Destructive: true},
		writeMeta(true, "path"),
		func(ctx context.Context, in DeleteIn) (DeleteOut, error) {
			rel, err := workspacepath.Clean(in.Path)
			if err != nil {
				return DeleteOut{}, err
			}
			if rel == "." {
				return DeleteOut{}, toolerr.New(toolerr.InvalidArgument, "Name an entry inside the workspace.",
					"the workspace root cannot be deleted")
			}
			if err := live(ctx, rel); err != nil {
				return DeleteOut{}, err
			}
			if err := s.ws.Remove(rel); err != nil {
				return DeleteOut{}, err
			}
			return DeleteOut{Path: rel, Deleted: true}, nil
		})
}
