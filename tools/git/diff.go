package git

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	"github.com/bmatcuk/doublestar/v4"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// side is one side of a file's change: its content, or absent.
type side struct {
	present bool
	binary  bool
	text    string
}

// fileChange is one file's change between two sides.
type fileChange struct {
	Path     string
	Old, New side
}

// FileStat is one changed file of a diff, as git diff --stat counts it.
type FileStat struct {
	Path      string `json:"path"`
	Status    string `json:"status" jsonschema:"added, modified or deleted"`
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
	Binary    bool   `json:"binary,omitempty"`
	// Withheld: a secret file's (capabilities.secret_files) contents are
	// never shown.
	Withheld bool `json:"withheld,omitempty" jsonschema:"True when the file matches capabilities.secret_files: its diff is not shown"`
}

// patch is a rendered diff, cut at a byte limit.
type patch struct {
	Text      string
	Files     []FileStat
	Truncated bool
}

// render renders changes as a unified diff of at most limit bytes; the
// stats cover every change whether or not its text fits.
func (s *Set) render(changes []fileChange, limit int64) patch {
	var b strings.Builder
	var p patch
	for _, c := range changes {
		st := FileStat{Path: c.Path, Status: "modified"}
		switch {
		case !c.Old.present:
			st.Status = "added"
		case !c.New.present:
			st.Status = "deleted"
		}
		var text string
		switch {
		case s.secret(c.Path):
			st.Withheld = true
			text = fmt.Sprintf("diff --git a/%s b/%s\n(contents withheld: capabilities.secret_files)\n", c.Path, c.Path)
		case c.Old.binary || c.New.binary:
			st.Binary = true
			text = fmt.Sprintf("diff --git a/%s b/%s\nBinary files differ\n", c.Path, c.Path)
		default:
			oldLabel, newLabel := "a/"+c.Path, "b/"+c.Path
			if !c.Old.present {
				oldLabel = "/dev/null"
			}
			if !c.New.present {
				newLabel = "/dev/null"
			}
			u := udiff.Unified(oldLabel, newLabel, c.Old.text, c.New.text)
			st.Additions, st.Deletions = countLines(u)
			text = fmt.Sprintf("diff --git a/%s b/%s\n%s", c.Path, c.Path, u)
		}
		p.Files = append(p.Files, st)
		if p.Truncated || int64(b.Len()+len(text)) > limit {
			p.Truncated = true
			continue
		}
		b.WriteString(text)
	}
	p.Text = b.String()
	return p
}

// countLines counts a unified diff's added and deleted lines.
func countLines(u string) (add, del int) {
	for i, line := range strings.Split(u, "\n") {
		switch {
		case i < 2: // the ---/+++ header
		case strings.HasPrefix(line, "+"):
			add++
		case strings.HasPrefix(line, "-"):
			del++
		}
	}
	return add, del
}

func (s *Set) secret(p string) bool {
	for _, g := range s.secrets {
		if ok, _ := doublestar.Match(g, p); ok {
			return true
		}
	}
	return false
}

// content makes a side from bytes: text, or binary when it holds a NUL
// in its first 8000 bytes (git's own test).
func content(b []byte) side {
	head := b[:min(len(b), 8000)]
	if bytes.IndexByte(head, 0) >= 0 {
		return side{present: true, binary: true}
	}
	return side{present: true, text: string(b)}
}

// entry reads a tree or index entry's content: a blob's, or for a
// submodule (a gitlink, whose hash is a commit of another repository) the
// line git diff shows.
func (r *repo) entry(h plumbing.Hash, mode filemode.FileMode, limit int64) (side, error) {
	if mode == filemode.Submodule {
		return side{present: true, text: "Subproject commit " + h.String() + "\n"}, nil
	}
	return r.blob(h, limit)
}

// blob reads an object's content, at most limit bytes (more is binary to
// the diff: too large to show).
func (r *repo) blob(h plumbing.Hash, limit int64) (side, error) {
	b, err := r.BlobObject(h)
	if err != nil {
		return side{}, err
	}
	if b.Size > limit {
		return side{present: true, binary: true}, nil
	}
	rd, err := b.Reader()
	if err != nil {
		return side{}, err
	}
	defer rd.Close()
	data, err := io.ReadAll(io.LimitReader(rd, limit))
	if err != nil {
		return side{}, err
	}
	return content(data), nil
}

// file reads a work-tree file as git stores it: a symlink's content is
// its target. It goes through the bound filesystem, which refuses to
// follow a link out of the workspace.
func (r *repo) file(p string, limit int64) (side, error) {
	fs := r.wt.Filesystem
	fi, err := fs.Lstat(p)
	if err != nil {
		return side{}, nil // deleted
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		t, err := fs.Readlink(p)
		if err != nil {
			return side{}, err
		}
		return side{present: true, text: t}, nil
	}
	if fi.Size() > limit {
		return side{present: true, binary: true}, nil
	}
	f, err := fs.Open(p)
	if err != nil {
		return side{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit))
	if err != nil {
		return side{}, err
	}
	return content(data), nil
}
