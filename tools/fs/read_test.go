package fs_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools/fs"
)

// tenLines is ten lines of ten bytes: six fit in smallLimits' 64-byte cap.
var tenLines = func() string {
	var b strings.Builder
	for i := range 10 {
		fmt.Fprintf(&b, "line-%04d\n", i)
	}
	return b.String()
}()

func TestReadFile(t *testing.T) {
	tests := []struct {
		name    string
		content string
		args    map[string]any
		want    fs.ReadFileOut
	}{
		{"whole file", "a\nb\nc\n", map[string]any{},
			fs.ReadFileOut{Content: "a\nb\nc\n", StartLine: 1, Lines: 3}},
		{"no trailing newline", "a\nb", map[string]any{},
			fs.ReadFileOut{Content: "a\nb", StartLine: 1, Lines: 2}},
		{"empty file", "", map[string]any{},
			fs.ReadFileOut{Content: "", StartLine: 1, Lines: 0}},
		{"offset and limit", "a\nb\nc\n", map[string]any{"offset": 1, "limit": 1},
			fs.ReadFileOut{Content: "b\n", StartLine: 2, Lines: 1, Truncated: true, NextOffset: 2}},
		{"limit reaches the end exactly", "a\nb\nc\n", map[string]any{"offset": 1, "limit": 2},
			fs.ReadFileOut{Content: "b\nc\n", StartLine: 2, Lines: 2}},
		{"offset past the end", "a\nb\n", map[string]any{"offset": 5},
			fs.ReadFileOut{Content: "", StartLine: 6, Lines: 0}},
		{"truncated at MaxReadBytes", tenLines, map[string]any{},
			fs.ReadFileOut{Content: tenLines[:60], StartLine: 1, Lines: 6, Truncated: true, NextOffset: 6}},
		{"second page", tenLines, map[string]any{"offset": 6},
			fs.ReadFileOut{Content: tenLines[60:], StartLine: 7, Lines: 4}},
		{"exactly the cap", strings.Repeat("x", 63) + "\n", map[string]any{},
			fs.ReadFileOut{Content: strings.Repeat("x", 63) + "\n", StartLine: 1, Lines: 1}},
		{"single line over the cap makes progress", strings.Repeat("x", 200) + "\nnext\n", map[string]any{},
			fs.ReadFileOut{Content: strings.Repeat("x", 64), StartLine: 1, Lines: 1, Truncated: true, NextOffset: 1}},
		{"line after a long line", strings.Repeat("x", 200) + "\nnext\n", map[string]any{"offset": 1},
			fs.ReadFileOut{Content: "next\n", StartLine: 2, Lines: 1}},
		{"long line after short ones stops before it", "short\n" + strings.Repeat("y", 100) + "\n", map[string]any{},
			fs.ReadFileOut{Content: "short\n", StartLine: 1, Lines: 1, Truncated: true, NextOffset: 1}},
		{"unicode", "données é\n日本語\n", map[string]any{},
			fs.ReadFileOut{Content: "données é\n日本語\n", StartLine: 1, Lines: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.write("f.txt", tt.content)
			args := map[string]any{"path": "./f.txt"}
			for k, v := range tt.args {
				args[k] = v
			}
			got := callOK[fs.ReadFileOut](f, "read_file", args)
			tt.want.Path = "f.txt"
			tt.want.SizeBytes = int64(len(tt.content))
			require.Equal(t, tt.want, got)
		})
	}
}

func TestReadFileLongLineKeepsRunesWhole(t *testing.T) {
	f := newFixture(t)
	f.write("euro.txt", strings.Repeat("€", 100)+"\n") // 3 bytes each; 64 is not a multiple
	got := callOK[fs.ReadFileOut](f, "read_file", map[string]any{"path": "euro.txt"})
	require.True(t, utf8.ValidString(got.Content), "the cut must not split a rune")
	require.Equal(t, strings.Repeat("€", 21), got.Content)
	require.True(t, got.Truncated)
	require.Equal(t, 1, got.NextOffset)
}

// TestReadFilePaging reads whole files page by page, following next_offset,
// and checks that the pages add up to the file and that every call makes
// progress.
func TestReadFilePaging(t *testing.T) {
	tests := map[string]string{
		"ten lines":       tenLines,
		"varied lengths":  "a\n" + strings.Repeat("b", 40) + "\n" + strings.Repeat("c", 63) + "\n\n\nd",
		"many tiny lines": strings.Repeat("x\n", 100),
	}
	for name, content := range tests {
		for _, limit := range []int{0, 1, 3} {
			t.Run(fmt.Sprintf("%s/limit=%d", name, limit), func(t *testing.T) {
				f := newFixture(t)
				f.write("f.txt", content)
				var all strings.Builder
				offset := 0
				for calls := 0; ; calls++ {
					require.Less(t, calls, 200, "paging does not end")
					got := callOK[fs.ReadFileOut](f, "read_file", map[string]any{"path": "f.txt", "offset": offset, "limit": limit})
					require.LessOrEqual(t, len(got.Content), 64)
					require.Equal(t, offset+1, got.StartLine)
					all.WriteString(got.Content)
					if !got.Truncated {
						break
					}
					require.Greater(t, got.NextOffset, offset, "every page must make progress")
					require.Equal(t, offset+got.Lines, got.NextOffset)
					offset = got.NextOffset
				}
				require.Equal(t, content, all.String())
			})
		}
	}
}

func TestReadFileErrors(t *testing.T) {
	tests := []struct {
		name string
		args map[string]any
		code toolerr.Code
		rule string
	}{
		{"binary", map[string]any{"path": "bin.dat"}, toolerr.BinaryFile, "fs.text_only"},
		{"binary with text first", map[string]any{"path": "late_nul.dat"}, toolerr.BinaryFile, "fs.text_only"},
		{"invalid utf8", map[string]any{"path": "latin1.txt"}, toolerr.BinaryFile, "fs.text_only"},
		{"directory", map[string]any{"path": "dir"}, toolerr.NotAFile, ""},
		{"root", map[string]any{"path": "."}, toolerr.NotAFile, ""},
		{"missing", map[string]any{"path": "nope.txt"}, toolerr.NotFound, ""},
		{"missing parent", map[string]any{"path": "nodir/x.txt"}, toolerr.NotFound, ""},
		{"empty path", map[string]any{"path": ""}, toolerr.PathInvalid, "path.non_empty"},
		{"negative offset", map[string]any{"path": "a.txt", "offset": -1}, toolerr.InvalidArgument, "args.range"},
		{"negative limit", map[string]any{"path": "a.txt", "limit": -1}, toolerr.InvalidArgument, "args.range"},
		{"unknown argument", map[string]any{"path": "a.txt", "encoding": "latin1"}, toolerr.InvalidSchema, ""},
		{"wrong type", map[string]any{"path": 42}, toolerr.InvalidSchema, ""},
		{"symlink out", map[string]any{"path": "out_link"}, toolerr.PathSymlinkEscape, "path.symlink_inside_workspace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.write("a.txt", "a\n")
			f.write("bin.dat", "\x7fELF\x00\x01\x02")
			f.write("late_nul.dat", strings.Repeat("text\n", 100)+"\x00")
			f.write("latin1.txt", "caf\xe9\n")
			f.mkdir("dir")
			f.symlink("../outside/secret.txt", "out_link")
			e := callErr(f, "read_file", tt.args, tt.code)
			require.Equal(t, tt.rule, e.Rule)
			require.NotContains(t, e.Message, "outside secret")
		})
	}
}

func TestReadFileThroughSymlinkInside(t *testing.T) {
	f := newFixture(t)
	f.write("real/a.txt", "hello\n")
	f.symlink("real", "alias")
	got := callOK[fs.ReadFileOut](f, "read_file", map[string]any{"path": "alias/a.txt"})
	require.Equal(t, "hello\n", got.Content)
}

func TestReadMultipleFiles(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "alpha\n")
	f.write("b.txt", "beta\n")
	f.write("bin.dat", "\x00\x01")
	f.write("long.txt", strings.Repeat("l", 20)+"\n"+strings.Repeat("m", 20)+"\n") // 42 bytes
	f.mkdir("dir")

	t.Run("one bad path does not fail the others", func(t *testing.T) {
		f := f.on(t)
		got := callOK[fs.ReadMultipleOut](f, "read_multiple_files", map[string]any{"paths": []any{"a.txt", "missing.txt", "b.txt"}})
		require.Len(t, got.Files, 3)
		require.Equal(t, fs.FileResult{Path: "a.txt", Content: "alpha\n"}, got.Files[0])
		require.Equal(t, "missing.txt", got.Files[1].Path)
		require.NotNil(t, got.Files[1].Error)
		require.Equal(t, toolerr.NotFound, got.Files[1].Error.Code)
		require.Empty(t, got.Files[1].Content)
		require.Equal(t, fs.FileResult{Path: "b.txt", Content: "beta\n"}, got.Files[2])
	})
	t.Run("per-file error codes", func(t *testing.T) {
		f := f.on(t)
		got := callOK[fs.ReadMultipleOut](f, "read_multiple_files", map[string]any{"paths": []any{"bin.dat", "dir", "a.txt"}})
		require.Len(t, got.Files, 3)
		require.Equal(t, toolerr.BinaryFile, got.Files[0].Error.Code)
		require.Equal(t, toolerr.NotAFile, got.Files[1].Error.Code)
		require.Nil(t, got.Files[2].Error)
		require.Equal(t, "alpha\n", got.Files[2].Content)
	})
	t.Run("the cap is shared", func(t *testing.T) {
		f := f.on(t)
		// Two files: 32 bytes each, so the 42-byte file is cut after one line.
		got := callOK[fs.ReadMultipleOut](f, "read_multiple_files", map[string]any{"paths": []any{"long.txt", "a.txt"}})
		require.Len(t, got.Files, 2)
		require.Equal(t, strings.Repeat("l", 20)+"\n", got.Files[0].Content)
		require.True(t, got.Files[0].Truncated)
		require.False(t, got.Files[1].Truncated)
	})
	t.Run("alone a file gets the whole cap", func(t *testing.T) {
		f := f.on(t)
		got := callOK[fs.ReadMultipleOut](f, "read_multiple_files", map[string]any{"paths": []any{"long.txt"}})
		require.False(t, got.Files[0].Truncated)
		require.Equal(t, f.read("long.txt"), got.Files[0].Content)
	})
	for _, tt := range []struct {
		name string
		args map[string]any
		code toolerr.Code
	}{
		{"too many paths", map[string]any{"paths": []any{"a.txt", "b.txt", "a.txt", "b.txt"}}, toolerr.InvalidArgument},
		{"no paths", map[string]any{"paths": []any{}}, toolerr.InvalidArgument},
		{"paths missing", map[string]any{}, toolerr.InvalidArgument},
		{"paths not a list", map[string]any{"paths": "a.txt"}, toolerr.InvalidSchema},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := f.on(t)
			e := callErr(f, "read_multiple_files", tt.args, tt.code)
			if tt.code == toolerr.InvalidArgument {
				require.Equal(t, "fs.max_files_per_read", e.Rule)
			}
		})
	}
}
