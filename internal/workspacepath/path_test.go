package workspacepath_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/internal/workspacepath"
)

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

func TestCleanRejects(t *testing.T) {
	var (
		longPath      = strings.Repeat("a/", workspacepath.MaxPathBytes/2) + "b" // 4097 bytes
		longComponent = "dir/" + strings.Repeat("n", workspacepath.MaxComponentBytes+1)
	)
	tests := []struct {
		name string
		in   string
		code toolerr.Code
		rule string
	}{
		{"empty", "", toolerr.PathInvalid, "path.non_empty"},

		{"dotdot", "..", toolerr.PathOutsideWorkspace, "path.inside_workspace"},
		{"dotdot slash", "../", toolerr.PathOutsideWorkspace, "path.inside_workspace"},
		{"dotdot file", "../x", toolerr.PathOutsideWorkspace, "path.inside_workspace"},
		{"climb after descend", "a/../../x", toolerr.PathOutsideWorkspace, "path.inside_workspace"},
		{"dot then dotdot", "./../x", toolerr.PathOutsideWorkspace, "path.inside_workspace"},
		{"deep climb", "a/b/c/../../../../etc/passwd", toolerr.PathOutsideWorkspace, "path.inside_workspace"},
		{"sibling prefix", "../ws_evil/secret", toolerr.PathOutsideWorkspace, "path.inside_workspace"},
		{"sibling prefix via subdir", "sub/../../ws_evil/secret", toolerr.PathOutsideWorkspace, "path.inside_workspace"},

		{"absolute", "/etc/passwd", toolerr.PathOutsideWorkspace, "path.relative"},
		{"double slash", "//x", toolerr.PathOutsideWorkspace, "path.relative"},
		{"root", "/", toolerr.PathOutsideWorkspace, "path.relative"},
		{"absolute with dotdot", "/../x", toolerr.PathOutsideWorkspace, "path.relative"},

		{"backslash dotdot", "..\\x", toolerr.PathInvalid, "path.no_backslash"},
		{"backslash separator", "a\\b", toolerr.PathInvalid, "path.no_backslash"},
		{"unc path", "\\\\server\\share", toolerr.PathInvalid, "path.no_backslash"},

		{"nul", "a\x00b", toolerr.PathInvalid, "path.no_control_chars"},
		{"trailing nul", "a.txt\x00.png", toolerr.PathInvalid, "path.no_control_chars"},
		{"newline", "a\nb", toolerr.PathInvalid, "path.no_control_chars"},
		{"tab", "\t", toolerr.PathInvalid, "path.no_control_chars"},
		{"escape", "a\x1b[31mb", toolerr.PathInvalid, "path.no_control_chars"},
		{"del", "a\x7fb", toolerr.PathInvalid, "path.no_control_chars"},
		{"c1 control", "a\u0085b", toolerr.PathInvalid, "path.no_control_chars"},

		{"bidi override", "a\u202eb", toolerr.PathInvalid, "path.no_control_chars"},
		{"bidi isolate", "x\u2066.txt", toolerr.PathInvalid, "path.no_control_chars"},
		{"zero width space", "\u200b", toolerr.PathInvalid, "path.no_control_chars"},
		{"zero width joiner", "a\u200db", toolerr.PathInvalid, "path.no_control_chars"},
		{"byte order mark", "\ufeffmain.go", toolerr.PathInvalid, "path.no_control_chars"},
		{"soft hyphen", "pass\u00adwd", toolerr.PathInvalid, "path.no_control_chars"},

		{"drive letter slash", "C:/x", toolerr.PathInvalid, "path.no_drive_letter"},
		{"drive relative", "c:x", toolerr.PathInvalid, "path.no_drive_letter"},
		{"bare drive", "Z:", toolerr.PathInvalid, "path.no_drive_letter"},
		{"drive after dot", "./C:/x", toolerr.PathInvalid, "path.no_drive_letter"},
		{"drive after cancelled dir", "a/../c:x", toolerr.PathInvalid, "path.no_drive_letter"},

		{"path too long", longPath, toolerr.PathInvalid, "path.length"},
		{"component too long", longComponent, toolerr.PathInvalid, "path.component_length"},

		{"invalid utf8", "a\xffb", toolerr.PathInvalid, "path.utf8"},
		{"overlong slash", "a\xc0\xafb", toolerr.PathInvalid, "path.utf8"},
		{"overlong dotdot", "\xc0\xae\xc0\xae/x", toolerr.PathInvalid, "path.utf8"},
		{"lone surrogate", "a\xed\xa0\x80b", toolerr.PathInvalid, "path.utf8"},
		{"truncated rune", "é"[:1], toolerr.PathInvalid, "path.utf8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := workspacepath.Clean(tt.in)
			te := requireCode(t, err, tt.code)
			require.Equal(t, tt.rule, te.Rule)
			require.Empty(t, got, "a rejected path must not come back")
		})
	}
}

func TestCleanAccepts(t *testing.T) {
	maxComponent := strings.Repeat("n", workspacepath.MaxComponentBytes)
	maxPath := strings.Repeat("a/", workspacepath.MaxPathBytes/2-1) + "bb" // exactly 4096 bytes
	require.Len(t, maxPath, workspacepath.MaxPathBytes)
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"plain", "src/main.go", "src/main.go"},
		{"dotdot inside", "a/b/../c", "a/c"},
		{"leading dot", "./x", "x"},
		{"root", ".", "."},
		{"root slash", "./", "."},
		{"descend and return", "a/..", "."},
		{"double slash trailing slash", "a//b/", "a/b"},
		{"dots inside", "x/../y/./z", "y/z"},
		{"percent encoded dotdot stays literal", "%2e%2e/x", "%2e%2e/x"},
		{"percent encoded slash stays literal", "..%2fx", "..%2fx"},
		{"three dots", "...", "..."},
		{"dotdot prefix name", "..foo/bar", "..foo/bar"},
		{"dotdot suffix name", "foo../bar", "foo../bar"},
		{"hidden file", ".env", ".env"},
		{"colon not at start", "a/C:/x", "a/C:/x"},
		{"colon later in name", "ab:c", "ab:c"},
		{"sibling name", "ws_evil/secret", "ws_evil/secret"},
		{"accents", "données/é.txt", "données/é.txt"},
		{"cjk", "日本語/ファイル.md", "日本語/ファイル.md"},
		{"emoji", "notes/🚀.md", "notes/🚀.md"},
		{"space", "my file.txt", "my file.txt"},
		{"max component", "d/" + maxComponent, "d/" + maxComponent},
		{"max path", maxPath, maxPath},
		{"long before clean but short after", "a/" + strings.Repeat("../a/", 10) + maxComponent, "a/" + maxComponent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := workspacepath.Clean(tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			again, err := workspacepath.Clean(got)
			require.NoError(t, err, "a cleaned path must be accepted again")
			require.Equal(t, got, again, "Clean must be idempotent")
		})
	}
}

func TestCleanRefusesLineAndParagraphSeparators(t *testing.T) {
	for _, p := range []string{"a\u2028b", "a\u2029b", "\u3164.txt"} {
		_, err := workspacepath.Clean(p)
		require.Equal(t, toolerr.PathInvalid, toolerr.CodeOf(err), "%q", p)
	}
}

func TestCleanNamesTheFirstTooLongComponent(t *testing.T) {
	first := strings.Repeat("a", workspacepath.MaxComponentBytes+1)
	second := strings.Repeat("b", workspacepath.MaxComponentBytes+7)
	_, err := workspacepath.Clean("ok/" + first + "/" + second)
	te := requireCode(t, err, toolerr.PathInvalid)
	require.Contains(t, te.Message, fmt.Sprintf("a path component is %d bytes long", len(first)))
	_, err = workspacepath.Clean(second)
	require.Contains(t, requireCode(t, err, toolerr.PathInvalid).Message, fmt.Sprintf("is %d bytes long", len(second)))
}

// TestCleanASCIIShortcut: the printable ASCII characters Clean lets
// through without the Unicode tables are exactly those the tables let
// through.
func TestCleanASCIIShortcut(t *testing.T) {
	for r := rune(0); r < utf8.RuneSelf; r++ {
		invisible := r == 0 || unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
		_, err := workspacepath.Clean("dir/a" + string(r) + "b")
		if invisible {
			require.Equal(t, "path.no_control_chars", requireCode(t, err, toolerr.PathInvalid).Rule, "%U", r)
			continue
		}
		if err != nil {
			require.NotEqual(t, "path.no_control_chars", requireCode(t, err, toolerr.PathInvalid).Rule, "%U", r)
		}
	}
}
