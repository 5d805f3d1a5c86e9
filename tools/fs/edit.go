package fs

import (
	"context"
	"strings"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools"
)

// Edit is one exact search/replace.
type Edit struct {
	OldText    string `json:"old_text" jsonschema:"Exact text to find, including whitespace and indentation"`
	NewText    string `json:"new_text" jsonschema:"Replacement text"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"Replace every occurrence instead of requiring exactly one"`
}

// EditIn is edit_file's input.
type EditIn struct {
	Path   string `json:"path" jsonschema:"File path relative to the workspace root"`
	Edits  []Edit `json:"edits" jsonschema:"Edits applied in order, each to the result of the previous one"`
	DryRun bool   `json:"dry_run,omitempty" jsonschema:"Only return the diff, do not write"`
}

// EditOut is edit_file's output.
type EditOut struct {
	Path         string `json:"path"`
	Diff         string `json:"diff" jsonschema:"Unified diff of the change"`
	Replacements int    `json:"replacements"`
	Written      bool   `json:"written" jsonschema:"False for a dry run"`
}

const editFileDesc = `Change part of a workspace text file by exact search and replace, and get the unified diff.

When to use: for targeted changes to an existing file; safer than rewriting it with write_file. Read the file first so old_text matches exactly.

Parameters:
- path (required): relative to the workspace root.
- edits (required): list of {old_text, new_text, replace_all}. old_text must match the file exactly (whitespace included) and, unless replace_all is true, exactly once. Edits apply in order.
- dry_run: return the diff without writing.

Returns: diff (unified), replacements, written.

Errors: edit.no_match when old_text is not found; edit.ambiguous_match when it occurs more than once without replace_all; invalid_argument.binary_file; not_found; limit.too_large when the result exceeds fs.max_write_bytes. On any error nothing is written.

Side effects: rewrites the file atomically (temporary file, then rename) unless dry_run.

Example: {"path": "main.go", "edits": [{"old_text": "fmt.Println(\"hi\")", "new_text": "fmt.Println(\"hello\")"}]}`

func (s *Set) editFile() tools.Tool {
	return tools.New("edit_file", editFileDesc,
		tools.Annotations{Title: "Edit file", Destructive: true},
		reading(writeMeta(false, "path"), "fs:read:{path}"),
		func(ctx context.Context, in EditIn) (EditOut, error) { return s.edit(ctx, in) })
}

// edit reads the file and applies in's edits, writing unless in.DryRun.
func (s *Set) edit(ctx context.Context, in EditIn) (EditOut, error) {
	if len(in.Edits) == 0 {
		return EditOut{}, toolerr.New(toolerr.InvalidArgument, "Give at least one edit.", "edits is empty").WithRule("args.edits")
	}
	rel, err := s.writable(in.Path, 0)
	if err != nil {
		return EditOut{}, err
	}
	data, truncated, err := s.ws.ReadFileLimited(rel, s.limits.MaxWriteBytes)
	if err != nil {
		return EditOut{}, err
	}
	if truncated || !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
		return EditOut{}, toolerr.New(toolerr.BinaryFile, "Only UTF-8 text files up to fs.max_write_bytes can be edited.",
			"%q is binary or too large to edit", rel)
	}
	return s.applyEdits(ctx, rel, string(data), in)
}

func (s *Set) applyEdits(ctx context.Context, rel, old string, in EditIn) (EditOut, error) {
	text, total := old, 0
	for i, e := range in.Edits {
		n := strings.Count(text, e.OldText)
		switch {
		case e.OldText == "":
			return EditOut{}, toolerr.New(toolerr.InvalidArgument, "old_text must not be empty.", "edit %d has an empty old_text", i+1)
		case n == 0:
			return EditOut{}, toolerr.New(toolerr.EditNoMatch, "Read the file again and copy old_text exactly, whitespace included.",
				"edit %d: old_text was not found in %q", i+1, rel)
		case n > 1 && !e.ReplaceAll:
			return EditOut{}, toolerr.New(toolerr.EditAmbiguous, "Add surrounding lines to old_text so it is unique, or set replace_all.",
				"edit %d: old_text occurs %d times in %q", i+1, n, rel)
		}
		if e.ReplaceAll {
			text = strings.ReplaceAll(text, e.OldText, e.NewText)
		} else {
			text = strings.Replace(text, e.OldText, e.NewText, 1)
		}
		total += n
	}
	if _, err := s.writable(rel, len(text)); err != nil {
		return EditOut{}, err
	}
	out := EditOut{Path: rel, Diff: udiff.Unified("a/"+rel, "b/"+rel, old, text), Replacements: total}
	if in.DryRun {
		return out, nil
	}
	if err := s.ws.WriteFileAtomic(ctx, rel, []byte(text)); err != nil {
		return EditOut{}, uncommitted(err, rel)
	}
	out.Written = true
	return out, nil
}
