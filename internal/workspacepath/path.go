// Package workspacepath holds the syntax rules of a workspace-relative path
// from untrusted input: what the fs tools, declared tools' filepath params
// and the guard's path needs all accept before any file is opened. It is
// purely lexical and imports nothing of toolwarden but toolerr, so the
// guard, the sandbox and the tools share one set of rules without
// depending on each other.
package workspacepath

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// Limits on path syntax. They match Linux's PATH_MAX and NAME_MAX.
const (
	MaxPathBytes      = 4096
	MaxComponentBytes = 255
)

const relativeHint = `Use a path relative to the workspace root with forward slashes, e.g. "src/main.go"; "." is the root itself.`

// Clean checks the syntax of a workspace-relative path from untrusted
// input and returns it in canonical form ("." for the root).
//
// It is purely lexical: it rejects absolute paths, drive letters, backslashes,
// NUL and other control characters, invisible or bidi characters, invalid
// UTF-8, over-long paths or components, and any ".." that climbs above the
// root. Symlinks are handled later by os.Root, which refuses to leave the
// workspace.
func Clean(p string) (string, error) {
	if err := checkChars(p); err != nil {
		return "", err
	}
	if strings.HasPrefix(p, "/") {
		return "", toolerr.New(toolerr.PathOutsideWorkspace, relativeHint,
			"path %q is absolute; only paths relative to the workspace are allowed", p).WithRule("path.relative")
	}
	clean := path.Clean(p)
	// Check the cleaned path too: "./C:/x" cleans to "C:/x".
	if hasDriveLetter(p) || hasDriveLetter(clean) {
		return "", toolerr.New(toolerr.PathInvalid, relativeHint,
			"path %q starts with a drive letter; only paths relative to the workspace are allowed", p).WithRule("path.no_drive_letter")
	}
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", toolerr.New(toolerr.PathOutsideWorkspace, relativeHint,
			"path %q climbs out of the workspace with '..'", p).WithRule("path.inside_workspace")
	}
	if n := tooLongComponent(clean); n > 0 {
		return "", toolerr.New(toolerr.PathInvalid, "Shorten the file or directory name.",
			"a path component is %d bytes long; the limit is %d", n, MaxComponentBytes).WithRule("path.component_length")
	}
	return clean, nil
}

// tooLongComponent is the length of p's first "/"-separated component
// longer than MaxComponentBytes, or 0; it does not split p (Clean is on
// every call's path).
func tooLongComponent(p string) int {
	for p != "" {
		i := strings.IndexByte(p, '/')
		if i < 0 {
			i = len(p)
		}
		if i > MaxComponentBytes {
			return i
		}
		p = p[min(i+1, len(p)):]
	}
	return 0
}

func checkChars(p string) error {
	switch {
	case p == "":
		return toolerr.New(toolerr.PathInvalid, relativeHint, "path is empty").WithRule("path.non_empty")
	case len(p) > MaxPathBytes:
		return toolerr.New(toolerr.PathInvalid, "Use a shorter path.",
			"path is %d bytes long; the limit is %d", len(p), MaxPathBytes).WithRule("path.length")
	case !utf8.ValidString(p):
		return toolerr.New(toolerr.PathInvalid, relativeHint, "path is not valid UTF-8").WithRule("path.utf8")
	case strings.ContainsRune(p, '\\'):
		return toolerr.New(toolerr.PathInvalid, relativeHint,
			"path %q contains a backslash; use forward slashes", p).WithRule("path.no_backslash")
	}
	for _, r := range p {
		if r < utf8.RuneSelf && r >= 0x20 && r != 0x7f {
			continue // printable ASCII, what nearly every path is: none of the below
		}
		if r == 0 || unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) || r == '\u3164' {
			return toolerr.New(toolerr.PathInvalid, relativeHint,
				"path %q contains the control or invisible character %U", p, r).WithRule("path.no_control_chars")
		}
	}
	return nil
}

func hasDriveLetter(p string) bool {
	return len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0])
}

func isASCIILetter(b byte) bool {
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z')
}
