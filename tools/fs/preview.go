package fs

import (
	"context"
	"fmt"
	iofs "io/fs"
	"path"
	"strings"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/internal/workspacepath"
	"github.com/toolwarden/toolwarden/tools"
)

// The previews describe a write for the human who approves it: the action
// first, then the exact change as a unified diff. They only read.

// maxDiffBytes bounds what a write preview diffs; the human sees at most
// the head of a longer message anyway.
const maxDiffBytes = 1 << 20

// withPreviews sets the approval previews of the write tools.
func (s *Set) withPreviews(ts []tools.Tool) []tools.Tool {
	previews := map[string]tools.Preview{
		"write_file":       tools.PreviewOf(s.previewWrite),
		"edit_file":        tools.PreviewOf(s.previewEdit),
		"create_directory": tools.PreviewOf(s.previewMkdir),
		"move_file":        tools.PreviewOf(s.previewMove),
		"delete_file":      tools.PreviewOf(s.previewDelete),
	}
	for i := range ts {
		if p, ok := previews[ts[i].Tool.Name]; ok {
			ts[i] = tools.WithPreview(ts[i], p)
		}
	}
	return ts
}

func (s *Set) previewWrite(_ context.Context, in WriteFileIn) (string, error) {
	rel, err := s.writable(in.Path, len(in.Content))
	if err != nil {
		return "", err
	}
	dirs := ""
	if in.CreateDirs {
		dirs = fmt.Sprintf(", creating %s if missing", path.Dir(rel))
	}
	old, truncated, err := s.ws.ReadFileLimited(rel, s.limits.MaxWriteBytes)
	switch {
	case toolerr.CodeOf(err) == toolerr.NotFound:
		return fmt.Sprintf("Create file %s (%d bytes%s)\n\n%s", rel, len(in.Content), dirs,
			udiff.Unified("/dev/null", "b/"+rel, "", in.Content)), nil
	case err != nil:
		return "", err
	case truncated || !isText(old):
		return fmt.Sprintf("Replace binary or large file %s (%d bytes) with %d bytes of text:\n\n%s",
			rel, len(old), len(in.Content), in.Content), nil
	case len(old)+len(in.Content) > maxDiffBytes:
		return fmt.Sprintf("Overwrite file %s (%d bytes, was %d bytes; too large to diff) with:\n\n%s",
			rel, len(in.Content), len(old), in.Content), nil
	}
	return fmt.Sprintf("Overwrite file %s (%d bytes, was %d bytes)\n\n%s", rel, len(in.Content), len(old),
		udiff.Unified("a/"+rel, "b/"+rel, string(old), in.Content)), nil
}

func (s *Set) previewEdit(ctx context.Context, in EditIn) (string, error) {
	dry := in.DryRun
	in.DryRun = true
	out, err := s.edit(ctx, in)
	if err != nil {
		return "", err
	}
	if dry {
		return fmt.Sprintf("Show (dry run, nothing is written) %d replacement(s) in %s\n\n%s", out.Replacements, out.Path, out.Diff), nil
	}
	return fmt.Sprintf("Edit file %s (%d replacement(s))\n\n%s", out.Path, out.Replacements, out.Diff), nil
}

func (s *Set) previewMkdir(_ context.Context, in CreateDirIn) (string, error) {
	rel, err := workspacepath.Clean(in.Path)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Create directory %s (with any missing parents)", rel), nil
}

func (s *Set) previewMove(_ context.Context, in MoveIn) (string, error) {
	src, err := workspacepath.Clean(in.Source)
	if err != nil {
		return "", err
	}
	dst, err := workspacepath.Clean(in.Destination)
	if err != nil {
		return "", err
	}
	what := "entry"
	if fi, err := s.ws.Lstat(src); err == nil {
		what = kindOf(fi)
	}
	return fmt.Sprintf("Move %s %s to %s", what, src, dst), nil
}

func (s *Set) previewDelete(_ context.Context, in DeleteIn) (string, error) {
	rel, err := workspacepath.Clean(in.Path)
	if err != nil {
		return "", err
	}
	fi, err := s.ws.Lstat(rel)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Delete %s %s permanently (there is no trash)", kindOf(fi), rel), nil
}

func kindOf(fi iofs.FileInfo) string {
	switch m := fi.Mode(); {
	case m.IsDir():
		return "directory"
	case m&iofs.ModeSymlink != 0:
		return "symlink (not its target)"
	case m.IsRegular():
		return fmt.Sprintf("file (%d bytes)", fi.Size())
	}
	return "special file"
}

func isText(b []byte) bool {
	return utf8.Valid(b) && !strings.ContainsRune(string(b), 0)
}
