package fs_test

import (
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools/fs"
)

func TestWriteFile(t *testing.T) {
	tests := []struct {
		name    string
		args    map[string]any
		want    fs.WriteFileOut
		file    string // where the content lands
		content string
	}{
		{"create", map[string]any{"path": "new.txt", "content": "hello\n"},
			fs.WriteFileOut{Path: "new.txt", BytesWritten: 6, Created: true}, "new.txt", "hello\n"},
		{"overwrite", map[string]any{"path": "old.txt", "content": "new"},
			fs.WriteFileOut{Path: "old.txt", BytesWritten: 3}, "old.txt", "new"},
		{"empty content", map[string]any{"path": "old.txt", "content": ""},
			fs.WriteFileOut{Path: "old.txt", BytesWritten: 0}, "old.txt", ""},
		{"exactly the cap", map[string]any{"path": "cap.txt", "content": strings.Repeat("c", 64)},
			fs.WriteFileOut{Path: "cap.txt", BytesWritten: 64, Created: true}, "cap.txt", strings.Repeat("c", 64)},
		{"create_dirs", map[string]any{"path": "x/y/z.txt", "content": "deep", "create_dirs": true},
			fs.WriteFileOut{Path: "x/y/z.txt", BytesWritten: 4, Created: true}, "x/y/z.txt", "deep"},
		{"create_dirs with existing parent", map[string]any{"path": "dir/n.txt", "content": "n", "create_dirs": true},
			fs.WriteFileOut{Path: "dir/n.txt", BytesWritten: 1, Created: true}, "dir/n.txt", "n"},
		{"unclean path", map[string]any{"path": "./dir//../dir/u.txt", "content": "u"},
			fs.WriteFileOut{Path: "dir/u.txt", BytesWritten: 1, Created: true}, "dir/u.txt", "u"},
		{"unicode name", map[string]any{"path": "données/é.txt", "content": "ok", "create_dirs": true},
			fs.WriteFileOut{Path: "données/é.txt", BytesWritten: 2, Created: true}, "données/é.txt", "ok"},
		{"over a dangling symlink inside replaces the link", map[string]any{"path": "in_dangling", "content": "mine"},
			fs.WriteFileOut{Path: "in_dangling", BytesWritten: 4}, "in_dangling", "mine"},
		{"over a hard link replaces the link", map[string]any{"path": "hard_link", "content": "mine"},
			fs.WriteFileOut{Path: "hard_link", BytesWritten: 4}, "hard_link", "mine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.write("old.txt", "old content\n")
			f.mkdir("dir")
			f.symlink("dir/missing.txt", "in_dangling")
			if err := os.Link(f.secret, filepath.Join(f.dir, "hard_link")); err != nil {
				t.Skipf("no hard links here: %v", err)
			}
			got := callOK[fs.WriteFileOut](f, "write_file", tt.args)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.content, f.read(tt.file))
			fi, err := os.Lstat(filepath.Join(f.dir, filepath.FromSlash(tt.file)))
			require.NoError(t, err)
			require.True(t, fi.Mode().IsRegular())
			f.requireOutsideIntact()
			f.requireNoTemp()
		})
	}
}

func TestWriteFileFailures(t *testing.T) {
	tests := []struct {
		name string
		args map[string]any
		code toolerr.Code
		rule string
	}{
		{"too large keeps the old file", map[string]any{"path": "old.txt", "content": strings.Repeat("x", 65)}, toolerr.TooLarge, "fs.max_write_bytes"},
		{"parent missing", map[string]any{"path": "missing/new.txt", "content": "x"}, toolerr.NotFound, ""},
		{"root", map[string]any{"path": ".", "content": "x"}, toolerr.NotAFile, ""},
		{"root spelled otherwise", map[string]any{"path": "dir/..", "content": "x"}, toolerr.NotAFile, ""},
		{"a directory", map[string]any{"path": "dir", "content": "x"}, toolerr.NotAFile, ""},
		{"parent is a file", map[string]any{"path": "old.txt/x", "content": "x"}, toolerr.NotADirectory, ""},
		{"parent is a file with create_dirs", map[string]any{"path": "old.txt/x/y", "content": "x", "create_dirs": true}, toolerr.NotADirectory, ""},
		{"through a symlinked directory outside", map[string]any{"path": "out_dir/new.txt", "content": "x"}, toolerr.PathSymlinkEscape, "path.symlink_inside_workspace"},
		{"over a file in a symlinked directory outside", map[string]any{"path": "out_dir/secret.txt", "content": "x"}, toolerr.PathSymlinkEscape, "path.symlink_inside_workspace"},
		{"create_dirs through a symlinked directory outside", map[string]any{"path": "out_dir/sub/new.txt", "content": "x", "create_dirs": true}, toolerr.PathSymlinkEscape, "path.symlink_inside_workspace"},
		{"dotdot", map[string]any{"path": "../new.txt", "content": "x"}, toolerr.PathOutsideWorkspace, "path.inside_workspace"},
		{"over a symlink out", map[string]any{"path": "out_link", "content": "x"}, toolerr.PathSymlinkEscape, "path.symlink_inside_workspace"},
		{"over a dangling symlink out", map[string]any{"path": "out_dangling", "content": "x"}, toolerr.PathSymlinkEscape, "path.symlink_inside_workspace"},
		{"over a symlink loop", map[string]any{"path": "loop", "content": "x"}, toolerr.PathInvalid, "path.symlink_loop"},
		{"through a symlink loop", map[string]any{"path": "loop/new.txt", "content": "x", "create_dirs": true}, toolerr.PathInvalid, "path.symlink_loop"},
		{"unknown argument", map[string]any{"path": "new.txt", "content": "x", "mode": "0777"}, toolerr.InvalidSchema, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.write("old.txt", "old content\n")
			f.mkdir("dir")
			f.write("dir/keep.txt", "keep\n")
			f.symlink("../outside", "out_dir")
			f.symlink("../outside/secret.txt", "out_link")
			f.symlink("../outside/nowhere", "out_dangling")
			f.symlink("loop", "loop")
			e := callErr(f, "write_file", tt.args, tt.code)
			require.Equal(t, tt.rule, e.Rule)
			for _, link := range []string{"out_link", "out_dangling", "loop"} {
				fi, err := os.Lstat(filepath.Join(f.dir, link))
				require.NoError(t, err)
				require.Equal(t, iofs.ModeSymlink, fi.Mode().Type(), "%s is still the operator's link", link)
			}
			require.Equal(t, "old content\n", f.read("old.txt"))
			require.Equal(t, "keep\n", f.read("dir/keep.txt"))
			require.False(t, f.exists("new.txt"))
			require.False(t, f.exists("missing"))
			f.requireOutsideIntact()
			f.requireNoTemp()
		})
	}
}

func edits(pairs ...string) []any {
	var out []any
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, map[string]any{"old_text": pairs[i], "new_text": pairs[i+1]})
	}
	return out
}

func TestEditFile(t *testing.T) {
	const original = "package main\n\nfunc main() {\n\tprintln(\"old\")\n\tprintln(\"twice\")\n\tprintln(\"twice\")\n}\n"
	tests := []struct {
		name         string
		args         map[string]any
		want         string
		replacements int
		diffHas      []string
	}{
		{"single edit", map[string]any{"edits": edits(`println("old")`, `println("new")`)},
			strings.Replace(original, `"old"`, `"new"`, 1), 1,
			[]string{"--- a/main.go", "+++ b/main.go", "-\tprintln(\"old\")", "+\tprintln(\"new\")", "@@"}},
		{"replace_all", map[string]any{"edits": []any{map[string]any{"old_text": "twice", "new_text": "both", "replace_all": true}}},
			strings.ReplaceAll(original, "twice", "both"), 2,
			[]string{"-\tprintln(\"twice\")", "+\tprintln(\"both\")"}},
		{"replace_all with one occurrence", map[string]any{"edits": []any{map[string]any{"old_text": "old", "new_text": "new", "replace_all": true}}},
			strings.Replace(original, `"old"`, `"new"`, 1), 1, []string{"+\tprintln(\"new\")"}},
		{"edits apply in order", map[string]any{"edits": edits(`"old"`, `"mid"`, `"mid"`, `"end"`)},
			strings.Replace(original, `"old"`, `"end"`, 1), 2, []string{"+\tprintln(\"end\")"}},
		{"multi-line old_text disambiguates", map[string]any{"edits": edits("\tprintln(\"twice\")\n}", "\tprintln(\"last\")\n}")},
			strings.Replace(original, "\tprintln(\"twice\")\n}", "\tprintln(\"last\")\n}", 1), 1, []string{"+\tprintln(\"last\")"}},
		{"delete text", map[string]any{"edits": edits("\tprintln(\"old\")\n", "")},
			strings.Replace(original, "\tprintln(\"old\")\n", "", 1), 1, []string{"-\tprintln(\"old\")"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixtureWith(t, largeWrites())
			f.write("main.go", original)
			tt.args["path"] = "main.go"
			got := callOK[fs.EditOut](f, "edit_file", tt.args)
			require.Equal(t, "main.go", got.Path)
			require.True(t, got.Written)
			require.Equal(t, tt.replacements, got.Replacements)
			for _, s := range tt.diffHas {
				require.Contains(t, got.Diff, s)
			}
			require.Equal(t, tt.want, f.read("main.go"))
			f.requireNoTemp()
		})
	}
	t.Run("dry run writes nothing", func(t *testing.T) {
		f := newFixtureWith(t, largeWrites())
		f.write("main.go", original)
		got := callOK[fs.EditOut](f, "edit_file", map[string]any{"path": "main.go", "dry_run": true,
			"edits": edits(`println("old")`, `println("new")`)})
		require.False(t, got.Written)
		require.Equal(t, 1, got.Replacements)
		require.Contains(t, got.Diff, "-\tprintln(\"old\")")
		require.Contains(t, got.Diff, "+\tprintln(\"new\")")
		require.Equal(t, original, f.read("main.go"))
		f.requireNoTemp()
	})
	t.Run("editing through a symlink inside replaces the link", func(t *testing.T) {
		f := newFixtureWith(t, largeWrites())
		f.write("main.go", original)
		f.symlink("main.go", "alias.go")
		callOK[fs.EditOut](f, "edit_file", map[string]any{"path": "alias.go", "edits": edits(`"old"`, `"new"`)})
		require.Equal(t, original, f.read("main.go"), "the link target is not written through")
		require.Contains(t, f.read("alias.go"), `"new"`)
	})
}

// largeWrites allows files the size of TestEditFile's.
func largeWrites() fs.Limits {
	l := smallLimits()
	l.MaxWriteBytes = 200
	return l
}

func TestEditFileFailures(t *testing.T) {
	const content = "one two two\n"
	tests := []struct {
		name string
		args map[string]any
		code toolerr.Code
	}{
		{"no match", map[string]any{"path": "a.txt", "edits": edits("three", "3")}, toolerr.EditNoMatch},
		{"whitespace must match", map[string]any{"path": "a.txt", "edits": edits("one  two", "x")}, toolerr.EditNoMatch},
		{"ambiguous", map[string]any{"path": "a.txt", "edits": edits("two", "2")}, toolerr.EditAmbiguous},
		{"a later edit fails", map[string]any{"path": "a.txt", "edits": edits("one", "1", "three", "3")}, toolerr.EditNoMatch},
		{"a later edit no longer matches", map[string]any{"path": "a.txt", "edits": edits("one", "1", "one", "uno")}, toolerr.EditNoMatch},
		{"empty old_text", map[string]any{"path": "a.txt", "edits": edits("", "x")}, toolerr.InvalidArgument},
		{"no edits", map[string]any{"path": "a.txt", "edits": []any{}}, toolerr.InvalidArgument},
		{"result too large", map[string]any{"path": "a.txt", "edits": edits("one", strings.Repeat("1", 60))}, toolerr.TooLarge},
		{"binary file", map[string]any{"path": "bin.dat", "edits": edits("a", "b")}, toolerr.BinaryFile},
		{"non-UTF-8 file", map[string]any{"path": "latin1.txt", "edits": edits("caf", "tea")}, toolerr.BinaryFile},
		{"file over the write cap", map[string]any{"path": "big.txt", "edits": edits("x", "y")}, toolerr.BinaryFile},
		{"missing", map[string]any{"path": "nope.txt", "edits": edits("a", "b")}, toolerr.NotFound},
		{"directory", map[string]any{"path": "dir", "edits": edits("a", "b")}, toolerr.NotAFile},
		{"root", map[string]any{"path": ".", "edits": edits("a", "b")}, toolerr.NotAFile},
		{"escaping symlink", map[string]any{"path": "out_link", "edits": edits("secret", "public")}, toolerr.PathSymlinkEscape},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.write("a.txt", content)
			f.write("bin.dat", "a\x00b")
			f.write("latin1.txt", "caf\xe9")
			f.write("big.txt", strings.Repeat("x", 65))
			f.mkdir("dir")
			f.symlink("../outside/secret.txt", "out_link")
			callErr(f, "edit_file", tt.args, tt.code)
			require.Equal(t, content, f.read("a.txt"), "a failed edit writes nothing")
			require.Equal(t, "a\x00b", f.read("bin.dat"))
			f.requireOutsideIntact()
			f.requireNoTemp()
		})
	}
}

func TestCreateDirectory(t *testing.T) {
	f := newFixture(t)
	f.write("file.txt", "x")
	f.symlink("../outside", "out_dir")

	got := callOK[fs.CreateDirOut](f, "create_directory", map[string]any{"path": "a/b/c"})
	require.Equal(t, fs.CreateDirOut{Path: "a/b/c", Created: true}, got)
	fi, err := os.Stat(filepath.Join(f.dir, "a", "b", "c"))
	require.NoError(t, err)
	require.True(t, fi.IsDir())

	got = callOK[fs.CreateDirOut](f, "create_directory", map[string]any{"path": "a/b/c"})
	require.Equal(t, fs.CreateDirOut{Path: "a/b/c", Created: false}, got, "creating it again is not an error")
	got = callOK[fs.CreateDirOut](f, "create_directory", map[string]any{"path": "a/./b/"})
	require.Equal(t, fs.CreateDirOut{Path: "a/b", Created: false}, got)
	got = callOK[fs.CreateDirOut](f, "create_directory", map[string]any{"path": "."})
	require.Equal(t, fs.CreateDirOut{Path: ".", Created: false}, got)

	for _, tt := range []struct {
		name string
		path string
		code toolerr.Code
	}{
		{"a file in the way", "file.txt", toolerr.NotADirectory},
		{"below a file", "file.txt/sub", toolerr.NotADirectory},
		{"through a symlinked directory outside", "out_dir/sub", toolerr.PathSymlinkEscape},
		{"outside", "../sub", toolerr.PathOutsideWorkspace},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := f.on(t)
			callErr(f, "create_directory", map[string]any{"path": tt.path}, tt.code)
			require.Equal(t, "x", f.read("file.txt"))
			f.requireOutsideIntact()
		})
	}
}

func TestMoveFile(t *testing.T) {
	tests := []struct {
		name     string
		src, dst string
		want     fs.MoveOut
		code     toolerr.Code
	}{
		{"rename", "a.txt", "c.txt", fs.MoveOut{Source: "a.txt", Destination: "c.txt"}, ""},
		{"into a directory", "a.txt", "dir/a.txt", fs.MoveOut{Source: "a.txt", Destination: "dir/a.txt"}, ""},
		{"a directory", "dir", "dir2", fs.MoveOut{Source: "dir", Destination: "dir2"}, ""},
		{"unclean paths", "./a.txt", "dir/../c.txt", fs.MoveOut{Source: "a.txt", Destination: "c.txt"}, ""},
		{"an escaping symlink moves the link", "out_link", "moved_link", fs.MoveOut{Source: "out_link", Destination: "moved_link"}, ""},
		{"existing destination", "a.txt", "b.txt", fs.MoveOut{}, toolerr.AlreadyExists},
		{"existing directory destination", "a.txt", "dir", fs.MoveOut{}, toolerr.AlreadyExists},
		{"onto itself", "a.txt", "a.txt", fs.MoveOut{}, toolerr.AlreadyExists},
		{"missing source", "nope.txt", "c.txt", fs.MoveOut{}, toolerr.NotFound},
		{"missing destination parent", "a.txt", "nodir/c.txt", fs.MoveOut{}, toolerr.NotFound},
		{"root as source", ".", "c", fs.MoveOut{}, toolerr.InvalidArgument},
		{"root as destination", "a.txt", "dir/..", fs.MoveOut{}, toolerr.InvalidArgument},
		{"into a symlinked directory outside", "a.txt", "out_dir/a.txt", fs.MoveOut{}, toolerr.PathSymlinkEscape},
		{"out of a symlinked directory outside", "out_dir/secret.txt", "stolen.txt", fs.MoveOut{}, toolerr.PathSymlinkEscape},
		{"destination outside", "a.txt", "../a.txt", fs.MoveOut{}, toolerr.PathOutsideWorkspace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.write("a.txt", "A")
			f.write("b.txt", "B")
			f.write("dir/inner.txt", "I")
			f.symlink("../outside", "out_dir")
			f.symlink("../outside/secret.txt", "out_link")
			args := map[string]any{"source": tt.src, "destination": tt.dst}
			if tt.code != "" {
				callErr(f, "move_file", args, tt.code)
				require.Equal(t, "A", f.read("a.txt"))
				require.Equal(t, "B", f.read("b.txt"))
				require.Equal(t, "I", f.read("dir/inner.txt"))
				require.False(t, f.exists("stolen.txt"))
			} else {
				got := callOK[fs.MoveOut](f, "move_file", args)
				require.Equal(t, tt.want, got)
				require.False(t, f.exists(got.Source))
				require.True(t, f.exists(got.Destination))
			}
			f.requireOutsideIntact()
		})
	}
}

func TestDeleteFile(t *testing.T) {
	tests := []struct {
		name string
		path string
		code toolerr.Code
	}{
		{"file", "a.txt", ""},
		{"empty directory", "empty", ""},
		{"escaping symlink removes only the link", "out_link", ""},
		{"symlinked directory removes only the link", "out_dir", ""},
		{"non-empty directory", "dir", toolerr.InvalidArgument},
		{"root", ".", toolerr.InvalidArgument},
		{"root spelled otherwise", "dir/..", toolerr.InvalidArgument},
		{"missing", "nope.txt", toolerr.NotFound},
		{"inside a symlinked directory outside", "out_dir/secret.txt", toolerr.PathSymlinkEscape},
		{"outside", "../outside/secret.txt", toolerr.PathOutsideWorkspace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.write("a.txt", "A")
			f.write("dir/inner.txt", "I")
			f.mkdir("empty")
			f.symlink("../outside", "out_dir")
			f.symlink("../outside/secret.txt", "out_link")
			if tt.code != "" {
				callErr(f, "delete_file", map[string]any{"path": tt.path}, tt.code)
				require.Equal(t, "A", f.read("a.txt"))
				require.Equal(t, "I", f.read("dir/inner.txt"))
				require.True(t, f.exists("empty"))
			} else {
				got := callOK[fs.DeleteOut](f, "delete_file", map[string]any{"path": tt.path})
				require.Equal(t, fs.DeleteOut{Path: tt.path, Deleted: true}, got)
				require.False(t, f.exists(tt.path))
			}
			f.requireOutsideIntact()
		})
	}
}
