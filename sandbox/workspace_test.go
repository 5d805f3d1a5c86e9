package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/internal/workspacepath"
	"github.com/toolwarden/toolwarden/sandbox"
)

const (
	secretText   = "top secret\n"
	evilText     = "evil secret\n"
	insideText   = "inside\n"
	dirFileText  = "file in dir\n"
	escapeRule   = "path.symlink_inside_workspace"
	tempPrefix   = ".toolwarden-tmp-"
	outsideMode  = 0o644
	insideTarget = "inside.txt"
)

// layout is a real directory tree:
//
//	parent/secret.txt
//	parent/ws_evil/secret      (sibling whose name starts with the workspace's)
//	parent/ws/                 (the workspace)
//	    inside.txt, dir/file.txt, empty/
//	    rel_link      -> ../secret.txt
//	    abs_link      -> <parent>/secret.txt
//	    evil_dir      -> ../ws_evil
//	    abs_evil_dir  -> <parent>/ws_evil
//	    chain         -> rel_link (inside, then out)
//	    dotdot_link   -> dir/../../secret.txt
//	    good_link     -> inside.txt
//	    good_dir_link -> dir
//	    up_and_in     -> dir/../inside.txt
type layout struct {
	parent, dir, evil, secret string
	ws                        *sandbox.Workspace
}

func newLayout(t *testing.T) *layout {
	t.Helper()
	parent := t.TempDir()
	l := &layout{
		parent: parent,
		dir:    filepath.Join(parent, "ws"),
		evil:   filepath.Join(parent, "ws_evil"),
		secret: filepath.Join(parent, "secret.txt"),
	}
	for _, d := range []string{l.dir, l.evil, filepath.Join(l.dir, "dir"), filepath.Join(l.dir, "empty")} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	mustWrite(t, l.secret, secretText)
	mustWrite(t, filepath.Join(l.evil, "secret"), evilText)
	mustWrite(t, filepath.Join(l.dir, insideTarget), insideText)
	mustWrite(t, filepath.Join(l.dir, "dir", "file.txt"), dirFileText)
	links := map[string]string{
		"rel_link":      "../secret.txt",
		"abs_link":      l.secret,
		"evil_dir":      "../ws_evil",
		"abs_evil_dir":  l.evil,
		"chain":         "rel_link",
		"dotdot_link":   "dir/../../secret.txt",
		"good_link":     insideTarget,
		"good_dir_link": "dir",
		"up_and_in":     "dir/../inside.txt",
	}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(l.dir, name)))
	}
	ws, err := sandbox.Open(l.dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	l.ws = ws
	return l
}

func mustWrite(t *testing.T, name, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(name, []byte(content), outsideMode))
}

// requireOutsideIntact checks that nothing outside the workspace changed.
func (l *layout) requireOutsideIntact(t *testing.T) {
	t.Helper()
	requireContent(t, l.secret, secretText)
	requireContent(t, filepath.Join(l.evil, "secret"), evilText)
	entries, err := os.ReadDir(l.evil)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing may be created in the sibling directory")
	entries, err = os.ReadDir(l.parent)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, []string{"secret.txt", "ws", "ws_evil"}, names, "nothing may be created next to the workspace")
}

// requireNoTemp checks that no temporary file of an atomic write is left in the tree.
func requireNoTemp(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		require.False(t, sandbox.IsTempName(d.Name()), "temporary file left behind: %s", p)
		return nil
	})
	require.NoError(t, err)
}

func requireContent(t *testing.T, name, want string) {
	t.Helper()
	got, err := os.ReadFile(name)
	require.NoError(t, err)
	require.Equal(t, want, string(got))
}

func TestSiblingPrefixIsRejected(t *testing.T) {
	l := newLayout(t)
	for _, p := range []string{"../ws_evil/secret", "../ws_evil", "dir/../../ws_evil/secret"} {
		t.Run(p, func(t *testing.T) {
			_, err := workspacepath.Clean(p)
			requireCode(t, err, toolerr.PathOutsideWorkspace)
			// Even without workspacepath.Clean, os.Root refuses to climb out.
			_, err = l.ws.Open(p)
			requireCode(t, err, toolerr.PathSymlinkEscape)
			_, _, err = l.ws.ReadFileLimited(p, 1024)
			requireCode(t, err, toolerr.PathSymlinkEscape)
		})
	}
}

func TestSymlinkEscapesAreRefused(t *testing.T) {
	l := newLayout(t)
	ops := []struct {
		name string
		do   func(rel string) error
	}{
		{"Open", func(rel string) error {
			f, err := l.ws.Open(rel)
			if err == nil {
				f.Close()
			}
			return err
		}},
		{"ReadFileLimited", func(rel string) error {
			data, _, err := l.ws.ReadFileLimited(rel, 1024)
			require.Empty(t, data)
			return err
		}},
		{"Stat", func(rel string) error {
			_, err := l.ws.Stat(rel)
			return err
		}},
		{"ReadDir", func(rel string) error {
			entries, err := l.ws.ReadDir(rel)
			require.Empty(t, entries)
			return err
		}},
	}
	paths := []string{
		"rel_link",            // relative symlink to ../secret.txt
		"abs_link",            // absolute symlink to secret.txt
		"chain",               // inside link to an escaping link
		"dotdot_link",         // climbs out through a real directory
		"evil_dir/secret",     // symlinked directory to the sibling
		"abs_evil_dir/secret", // same, absolute
		"evil_dir",            // the symlinked directory itself
	}
	for _, op := range ops {
		for _, p := range paths {
			t.Run(op.name+"/"+p, func(t *testing.T) {
				te := requireCode(t, op.do(p), toolerr.PathSymlinkEscape)
				require.Equal(t, escapeRule, te.Rule)
				require.NotContains(t, te.Message, l.parent, "the message must not reveal the outside path")
			})
		}
	}
}

func TestSymlinksInsideWork(t *testing.T) {
	l := newLayout(t)
	tests := []struct{ rel, want string }{
		{"good_link", insideText},
		{"up_and_in", insideText},
		{"good_dir_link/file.txt", dirFileText},
		{"good_dir_link/../inside.txt", insideText},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			data, truncated, err := l.ws.ReadFileLimited(tt.rel, 1024)
			require.NoError(t, err)
			require.False(t, truncated)
			require.Equal(t, tt.want, string(data))
			fi, err := l.ws.Stat(tt.rel)
			require.NoError(t, err)
			require.True(t, fi.Mode().IsRegular())
		})
	}
	t.Run("Lstat does not follow an escaping link", func(t *testing.T) {
		fi, err := l.ws.Lstat("rel_link")
		require.NoError(t, err)
		require.Equal(t, fs.ModeSymlink, fi.Mode().Type())
	})
}

func TestReadFileLimited(t *testing.T) {
	l := newLayout(t)
	tests := []struct {
		name          string
		rel           string
		limit         int64
		want          string
		wantTruncated bool
		code          toolerr.Code
	}{
		{"under limit", insideTarget, 100, insideText, false, ""},
		{"exact limit", insideTarget, int64(len(insideText)), insideText, false, ""},
		{"over limit", insideTarget, 3, insideText[:3], true, ""},
		{"zero limit", insideTarget, 0, "", true, ""},
		{"directory", "dir", 100, "", false, toolerr.NotAFile},
		{"missing", "nope.txt", 100, "", false, toolerr.NotFound},
		{"file as directory", "inside.txt/x", 100, "", false, toolerr.NotADirectory},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, truncated, err := l.ws.ReadFileLimited(tt.rel, tt.limit)
			if tt.code != "" {
				var te *toolerr.Error
				require.True(t, errors.As(err, &te), "got %v", err)
				require.Equal(t, tt.code, te.Code)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, string(data))
			require.Equal(t, tt.wantTruncated, truncated)
		})
	}
}

func TestWriteFileAtomicReplacesHardLinks(t *testing.T) {
	tests := []struct {
		name string
		rel  string
		link func(l *layout) error
	}{
		{"hard link out", "hard_link", func(l *layout) error {
			return os.Link(l.secret, filepath.Join(l.dir, "hard_link"))
		}},
		{"hard link to sibling", "hard_evil", func(l *layout) error {
			return os.Link(filepath.Join(l.evil, "secret"), filepath.Join(l.dir, "hard_evil"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLayout(t)
			if err := tt.link(l); err != nil {
				t.Skipf("cannot create the link here: %v", err)
			}
			require.NoError(t, l.ws.WriteFileAtomic(context.Background(), tt.rel, []byte("pwned\n")))

			l.requireOutsideIntact(t)
			fi, err := os.Lstat(filepath.Join(l.dir, tt.rel))
			require.NoError(t, err)
			require.True(t, fi.Mode().IsRegular(), "the link is replaced by a regular file")
			requireContent(t, filepath.Join(l.dir, tt.rel), "pwned\n")
			requireNoTemp(t, l.parent)
		})
	}
}

// hostileLinks adds the symlinks of issue 22: dangling ones out of the
// workspace, a dangling one inside, and a loop.
func hostileLinks(t *testing.T, l *layout) {
	t.Helper()
	for name, target := range map[string]string{
		"dangling_abs_out": filepath.Join(l.parent, "nowhere"),
		"dangling_rel_out": "../nowhere",
		"dangling_sibling": "../ws_evil/nowhere",
		"dangling_in":      "dir/missing.txt",
		"loop_a":           "loop_b",
		"loop_b":           "loop_a",
		"self":             "self",
	} {
		require.NoError(t, os.Symlink(target, filepath.Join(l.dir, name)))
	}
}

// TestWriteFileAtomicRefusesLinksOut: a write onto a symlink that leads out
// of the workspace (to a file or to nothing) or into a loop is refused
// with the rule, and the operator's link stays as it was.
func TestWriteFileAtomicRefusesLinksOut(t *testing.T) {
	tests := []struct {
		rel  string
		code toolerr.Code
		rule string
	}{
		{"rel_link", toolerr.PathSymlinkEscape, "path.symlink_inside_workspace"},
		{"abs_link", toolerr.PathSymlinkEscape, "path.symlink_inside_workspace"},
		{"chain", toolerr.PathSymlinkEscape, "path.symlink_inside_workspace"},
		{"dangling_abs_out", toolerr.PathSymlinkEscape, "path.symlink_inside_workspace"},
		{"dangling_rel_out", toolerr.PathSymlinkEscape, "path.symlink_inside_workspace"},
		{"dangling_sibling", toolerr.PathSymlinkEscape, "path.symlink_inside_workspace"},
		{"loop_a", toolerr.PathInvalid, "path.symlink_loop"},
		{"self", toolerr.PathInvalid, "path.symlink_loop"},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			l := newLayout(t)
			hostileLinks(t, l)
			link := filepath.Join(l.dir, tt.rel)
			before, err := os.Readlink(link)
			require.NoError(t, err)

			te := requireCode(t, l.ws.WriteFileAtomic(context.Background(), tt.rel, []byte("pwned\n")), tt.code)
			require.Equal(t, tt.rule, te.Rule)

			after, err := os.Readlink(link)
			require.NoError(t, err, "the link is still a link")
			require.Equal(t, before, after)
			l.requireOutsideIntact(t)
			requireNoTemp(t, l.parent)
		})
	}
}

// TestWriteFileAtomicDanglingLinkInside documents the choice for a link
// that points inside the workspace at nothing: like a link to an existing
// file inside, it is replaced by the written file, and its target is not
// created (the guard checked both paths; nothing leaves the workspace).
func TestWriteFileAtomicDanglingLinkInside(t *testing.T) {
	l := newLayout(t)
	hostileLinks(t, l)
	require.NoError(t, l.ws.WriteFileAtomic(context.Background(), "dangling_in", []byte("new")))
	fi, err := os.Lstat(filepath.Join(l.dir, "dangling_in"))
	require.NoError(t, err)
	require.True(t, fi.Mode().IsRegular())
	requireContent(t, filepath.Join(l.dir, "dangling_in"), "new")
	require.NoFileExists(t, filepath.Join(l.dir, "dir", "missing.txt"))
	l.requireOutsideIntact(t)
}

// TestHostileLinksEveryOperation: every workspace operation on a dangling
// link out of the workspace or a loop names the rule, never "internal".
func TestHostileLinksEveryOperation(t *testing.T) {
	l := newLayout(t)
	hostileLinks(t, l)
	ops := []struct {
		name string
		do   func(rel string) error
	}{
		{"Open", func(rel string) error { _, err := l.ws.Open(rel); return err }},
		{"Stat", func(rel string) error { _, err := l.ws.Stat(rel); return err }},
		{"ReadDir", func(rel string) error { _, err := l.ws.ReadDir(rel); return err }},
		{"ReadFileLimited", func(rel string) error { _, _, err := l.ws.ReadFileLimited(rel, 10); return err }},
		{"MkdirAll below", func(rel string) error { return l.ws.MkdirAll(rel + "/sub") }},
		{"WriteFileAtomic below", func(rel string) error {
			return l.ws.WriteFileAtomic(context.Background(), rel+"/f", []byte("x"))
		}},
		{"Rename into", func(rel string) error { return l.ws.Rename(insideTarget, rel+"/moved") }},
	}
	links := map[string]toolerr.Code{
		"dangling_abs_out": toolerr.PathSymlinkEscape,
		"dangling_rel_out": toolerr.PathSymlinkEscape,
		"loop_a":           toolerr.PathInvalid,
		"self":             toolerr.PathInvalid,
	}
	for _, op := range ops {
		for rel, code := range links {
			t.Run(op.name+" "+rel, func(t *testing.T) {
				te := requireCode(t, op.do(rel), code)
				require.NotEmpty(t, te.Rule)
				require.Contains(t, te.Message, rel, "the message names the path at fault")
			})
		}
	}
	l.requireOutsideIntact(t)
	requireContent(t, filepath.Join(l.dir, insideTarget), insideText)
}

func TestWriteFileAtomic(t *testing.T) {
	t.Run("creates", func(t *testing.T) {
		l := newLayout(t)
		require.NoError(t, l.ws.WriteFileAtomic(context.Background(), "dir/new.txt", []byte("new")))
		requireContent(t, filepath.Join(l.dir, "dir", "new.txt"), "new")
		requireNoTemp(t, l.dir)
	})
	t.Run("replaces and keeps permissions", func(t *testing.T) {
		l := newLayout(t)
		name := filepath.Join(l.dir, insideTarget)
		require.NoError(t, os.Chmod(name, 0o600))
		require.NoError(t, l.ws.WriteFileAtomic(context.Background(), insideTarget, []byte("replaced")))
		requireContent(t, name, "replaced")
		fi, err := os.Stat(name)
		require.NoError(t, err)
		require.Equal(t, fs.FileMode(0o600), fi.Mode().Perm())
		requireNoTemp(t, l.dir)
	})
	t.Run("through a symlink inside replaces the link, not the target", func(t *testing.T) {
		l := newLayout(t)
		require.NoError(t, l.ws.WriteFileAtomic(context.Background(), "good_link", []byte("new")))
		requireContent(t, filepath.Join(l.dir, insideTarget), insideText)
		requireContent(t, filepath.Join(l.dir, "good_link"), "new")
	})
}

// TestWriteFileAtomicStoppedBeforeCommit: a write whose call has ended by
// the rename changes nothing and leaves no temporary file.
func TestWriteFileAtomicStoppedBeforeCommit(t *testing.T) {
	for _, rel := range []string{"dir/new.txt", insideTarget} {
		l := newLayout(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		before, _ := os.ReadFile(filepath.Join(l.dir, rel))
		require.ErrorIs(t, l.ws.WriteFileAtomic(ctx, rel, []byte("late")), context.Canceled)
		after, _ := os.ReadFile(filepath.Join(l.dir, rel))
		require.Equal(t, string(before), string(after), "%s is as it was", rel)
		requireNoTemp(t, l.dir)
	}
}

func TestWriteFileAtomicFailures(t *testing.T) {
	tests := []struct {
		name  string
		rel   string
		setup func(t *testing.T, l *layout)
		code  toolerr.Code
	}{
		{"parent missing", "missing/new.txt", nil, toolerr.NotFound},
		{"target is a directory", "dir", nil, toolerr.NotAFile},
		{"target is a non-empty directory via link", "good_dir_link/", nil, toolerr.NotAFile},
		{"parent is a file", "inside.txt/new.txt", nil, toolerr.NotADirectory},
		{"through symlinked dir to sibling", "evil_dir/new.txt", nil, toolerr.PathSymlinkEscape},
		{"over existing file in symlinked dir", "evil_dir/secret", nil, toolerr.PathSymlinkEscape},
		{"through absolute symlinked dir", "abs_evil_dir/new.txt", nil, toolerr.PathSymlinkEscape},
		{"into a directory through an escaping link", "rel_link/x", nil, toolerr.PathSymlinkEscape},
		{"read-only directory", "ro/inside.txt", func(t *testing.T, l *layout) {
			testenv.NonRoot(t) // root ignores directory permissions
			ro := filepath.Join(l.dir, "ro")
			require.NoError(t, os.Mkdir(ro, 0o755))
			mustWrite(t, filepath.Join(ro, insideTarget), insideText)
			require.NoError(t, os.Chmod(ro, 0o555))
			t.Cleanup(func() { _ = os.Chmod(ro, 0o755) })
		}, toolerr.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLayout(t)
			if tt.setup != nil {
				tt.setup(t, l)
			}
			err := l.ws.WriteFileAtomic(context.Background(), tt.rel, []byte("clobbered"))
			requireCode(t, err, tt.code)

			requireNoTemp(t, l.parent)
			l.requireOutsideIntact(t)
			requireContent(t, filepath.Join(l.dir, insideTarget), insideText)
			requireContent(t, filepath.Join(l.dir, "dir", "file.txt"), dirFileText)
			if tt.setup != nil {
				requireContent(t, filepath.Join(l.dir, "ro", insideTarget), insideText)
			}
			_, err = os.Lstat(filepath.Join(l.dir, "missing"))
			require.ErrorIs(t, err, fs.ErrNotExist, "a failed write creates no directory")
		})
	}
}

func TestMkdirAllThroughEscapingLink(t *testing.T) {
	l := newLayout(t)
	for _, rel := range []string{"evil_dir/sub", "abs_evil_dir/sub/deeper", "rel_link/sub"} {
		t.Run(rel, func(t *testing.T) {
			requireCode(t, l.ws.MkdirAll(rel), toolerr.PathSymlinkEscape)
			l.requireOutsideIntact(t)
		})
	}
}

func TestRename(t *testing.T) {
	tests := []struct {
		name     string
		from, to string
		code     toolerr.Code
	}{
		{"moves a file", insideTarget, "dir/moved.txt", ""},
		{"renames a directory", "dir", "dir2", ""},
		{"refuses an existing file", insideTarget, "dir/file.txt", toolerr.AlreadyExists},
		{"refuses an existing directory", insideTarget, "empty", toolerr.AlreadyExists},
		{"refuses a dangling symlink", insideTarget, "rel_link", toolerr.AlreadyExists},
		{"missing source", "nope.txt", "new.txt", toolerr.NotFound},
		{"missing destination parent", insideTarget, "nodir/x.txt", toolerr.NotFound},
		{"into a symlinked dir outside", insideTarget, "evil_dir/stolen.txt", toolerr.PathSymlinkEscape},
		{"from a symlinked dir outside", "evil_dir/secret", "stolen.txt", toolerr.PathSymlinkEscape},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLayout(t)
			before := snapshot(t, l.dir)
			err := l.ws.Rename(tt.from, tt.to)
			l.requireOutsideIntact(t)
			if tt.code != "" {
				requireCode(t, err, tt.code)
				require.Equal(t, before, snapshot(t, l.dir), "a refused rename changes nothing")
				return
			}
			require.NoError(t, err)
			_, err = os.Lstat(filepath.Join(l.dir, tt.from))
			require.ErrorIs(t, err, fs.ErrNotExist)
			_, err = os.Lstat(filepath.Join(l.dir, tt.to))
			require.NoError(t, err)
		})
	}
}

func TestRemove(t *testing.T) {
	tests := []struct {
		name string
		rel  string
		code toolerr.Code
	}{
		{"file", insideTarget, ""},
		{"empty directory", "empty", ""},
		{"escaping symlink removes the link only", "rel_link", ""},
		{"symlinked dir removes the link only", "evil_dir", ""},
		{"non-empty directory", "dir", toolerr.InvalidArgument},
		{"missing", "nope", toolerr.NotFound},
		{"file in symlinked dir outside", "evil_dir/secret", toolerr.PathSymlinkEscape},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLayout(t)
			before := snapshot(t, l.dir)
			err := l.ws.Remove(tt.rel)
			l.requireOutsideIntact(t)
			if tt.code != "" {
				requireCode(t, err, tt.code)
				require.Equal(t, before, snapshot(t, l.dir))
				return
			}
			require.NoError(t, err)
			_, err = os.Lstat(filepath.Join(l.dir, tt.rel))
			require.ErrorIs(t, err, fs.ErrNotExist)
		})
	}
}

func TestMapError(t *testing.T) {
	coded := toolerr.New(toolerr.EditNoMatch, "hint", "msg")
	tests := []struct {
		name     string
		err      error
		code     toolerr.Code
		contains string
	}{
		{"not exist", &fs.PathError{Op: "open", Path: "a/b.txt", Err: fs.ErrNotExist}, toolerr.NotFound, `"a/b.txt"`},
		{"enoent", &fs.PathError{Op: "open", Path: "c.txt", Err: syscall.ENOENT}, toolerr.NotFound, `"c.txt"`},
		{"bare not exist uses rel", fs.ErrNotExist, toolerr.NotFound, `"rel.txt"`},
		{"wrapped not exist", fmt.Errorf("walk: %w", fs.ErrNotExist), toolerr.NotFound, ""},
		{"exist", &fs.PathError{Op: "mkdir", Path: "d", Err: syscall.EEXIST}, toolerr.AlreadyExists, ""},
		{"not a directory", &fs.PathError{Op: "open", Path: "f/x", Err: syscall.ENOTDIR}, toolerr.NotADirectory, ""},
		{"is a directory", &fs.PathError{Op: "write", Path: "d", Err: syscall.EISDIR}, toolerr.NotAFile, ""},
		{"permission", &fs.PathError{Op: "open", Path: "p", Err: syscall.EACCES}, toolerr.InvalidArgument, ""},
		{"escape", &fs.PathError{Op: "open", Path: "l", Err: errors.New("path escapes from parent")}, toolerr.PathSymlinkEscape, ""},
		{"other", io.ErrUnexpectedEOF, toolerr.Internal, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te := requireCode(t, sandbox.MapError("rel.txt", tt.err), tt.code)
			require.Contains(t, te.Message, tt.contains)
			require.ErrorIs(t, te, tt.err, "the cause is kept for errors.Is")
		})
	}
	t.Run("coded errors pass through", func(t *testing.T) {
		got := sandbox.MapError("x", fmt.Errorf("wrapped: %w", coded))
		require.Same(t, coded, got)
	})
	t.Run("nil stays nil", func(t *testing.T) {
		require.NoError(t, sandbox.MapError("x", nil))
	})
	t.Run("real not-exist from the workspace", func(t *testing.T) {
		l := newLayout(t)
		_, err := l.ws.Stat("does/not/exist")
		requireCode(t, err, toolerr.NotFound)
		_, err = l.ws.Open("nope.txt")
		te := requireCode(t, sandbox.MapError("nope.txt", err), toolerr.NotFound)
		require.Contains(t, te.Message, "nope.txt")
		require.NotContains(t, te.Message, l.dir, "messages name workspace paths, not host paths")
	})
}

func TestOpen(t *testing.T) {
	t.Run("resolves a symlinked workspace", func(t *testing.T) {
		l := newLayout(t)
		link := filepath.Join(l.parent, "ws_link")
		require.NoError(t, os.Symlink(l.dir, link))
		ws, err := sandbox.Open(link)
		require.NoError(t, err)
		defer ws.Close()
		want, err := filepath.EvalSymlinks(l.dir)
		require.NoError(t, err)
		require.Equal(t, want, ws.Dir())
		_, err = ws.Stat(insideTarget)
		require.NoError(t, err)
	})
	t.Run("missing directory", func(t *testing.T) {
		_, err := sandbox.Open(filepath.Join(t.TempDir(), "nope"))
		require.Error(t, err)
	})
	t.Run("a file is not a workspace", func(t *testing.T) {
		l := newLayout(t)
		_, err := sandbox.Open(l.secret)
		require.Error(t, err)
	})
	t.Run("ReadDir is sorted and FS is confined", func(t *testing.T) {
		l := newLayout(t)
		entries, err := l.ws.ReadDir("dir")
		require.NoError(t, err)
		require.Len(t, entries, 1)
		require.Equal(t, "file.txt", entries[0].Name())
		_, err = fs.ReadFile(l.ws.FS(), "rel_link")
		require.Error(t, err)
		_, err = fs.ReadFile(l.ws.FS(), "../secret.txt")
		require.Error(t, err)
	})
}

// snapshot records every path under root with its type and content.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, err := filepath.Rel(root, p)
		require.NoError(t, err)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			require.NoError(t, err)
			out[rel] = "link:" + target
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			out[rel] = "file:" + string(data)
		default:
			out[rel] = "dir"
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

func TestOpenFIFODoesNotBlock(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	ws, err := sandbox.Open(dir)
	require.NoError(t, err)
	defer ws.Close()
	done := make(chan error, 1)
	go func() {
		_, _, err := ws.ReadFileLimited("fifo", 100)
		done <- err
	}()
	select {
	case err := <-done:
		require.Equal(t, toolerr.NotAFile, toolerr.CodeOf(err))
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO blocked")
	}
}

// requireCode asserts that err is a *toolerr.Error with the given code and
// returns it.
func requireCode(t *testing.T, err error, code toolerr.Code) *toolerr.Error {
	t.Helper()
	require.Error(t, err)
	var te *toolerr.Error
	require.True(t, errors.As(err, &te), "want a *toolerr.Error, got %T: %v", err, err)
	require.Equal(t, code, te.Code, "message: %s", te.Message)
	require.NotEmpty(t, te.Message)
	require.NotEmpty(t, te.Hint, "every path error tells the model what to do instead")
	return te
}
