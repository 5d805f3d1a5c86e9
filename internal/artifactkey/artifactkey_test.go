package artifactkey

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

const task = "0b6d3c7e-8f52-4a1e-9a59-3c1f2a4b5d6e"

func TestCheckName(t *testing.T) {
	good := []string{"report.md", "a", "_hidden_not", "x-1.tar.gz", "Résumé"[:1] + "esume.pdf", "a+b=c,d@e~f(1).txt",
		strings.Repeat("n", MaxNameBytes), "trailing.", "0"}
	for _, name := range good {
		t.Run("ok/"+name[:min(len(name), 20)], func(t *testing.T) {
			require.NoError(t, CheckName(name))
		})
	}
	bad := map[string]string{
		"empty":                 "",
		"dot-dot":               "..",
		"dot":                   ".",
		"traversal":             "../secrets",
		"encoded traversal":     "..%2fsecrets",
		"encoded slash":         "a%2Fb",
		"percent":               "100%.txt",
		"slash":                 "a/b",
		"leading slash":         "/etc/passwd",
		"backslash":             `a\b`,
		"windows traversal":     `..\..\x`,
		"NUL":                   "a\x00.txt",
		"newline":               "a\nb",
		"tab":                   "a\tb",
		"DEL":                   "a\x7fb",
		"leading dot":           ".hidden",
		"leading dash":          "-rf",
		"dot-dot inside":        "a..b",
		"over-long":             strings.Repeat("n", MaxNameBytes+1),
		"300 bytes":             strings.Repeat("é", 150),
		"space":                 "my report.md",
		"fullwidth solidus":     "a\uff0fb",
		"division slash":        "..\u2215x",
		"fraction slash":        "a\u2044b",
		"one-dot leader":        "\u2024\u2024/x",
		"fullwidth full stop":   "\uff0e\uff0e",
		"cyrillic lookalike":    "r\u0435port.md",
		"zero-width space":      "a\u200bb",
		"bidi override":         "txt.\u202edm",
		"BOM":                   "\ufeffa",
		"invalid UTF-8":         "a\xffb",
		"colon (ADS, URI)":      "a:b",
		"question mark (URI)":   "a?b",
		"hash (URI)":            "a#b",
		"asterisk":              "*",
		"quote":                 `a"b`,
		"line separator":        "a\u2028b",
		"hangul filler":         "\u3164",
		"combining dot-dot":     ".\u0307.",
		"url scheme":            "artifact://x",
		"drive letter":          "C:x",
		"shell expansion":       "$(id)",
		"leading dash long opt": "--help",
	}
	for label, name := range bad {
		t.Run("refused/"+label, func(t *testing.T) {
			err := CheckName(name)
			require.Error(t, err)
			te := toolerr.As(err)
			require.Equal(t, toolerr.InvalidArgument, te.Code)
			require.Equal(t, "artifacts.name", te.Rule)
			require.NotEmpty(t, te.Hint)
			require.LessOrEqual(t, len(te.Message), 300, "messages echo only a bounded part of the input")
		})
	}
}

func TestNameHintSuggests(t *testing.T) {
	e := toolerr.As(CheckName("my report (v2).md"))
	require.Contains(t, e.Hint, `"my_report_(v2).md"`)
	require.NoError(t, CheckName("my_report_(v2).md"))
	e = toolerr.As(CheckName("../../etc/passwd"))
	require.Contains(t, e.Hint, `"_._etc_passwd"`)
}

func TestTaskID(t *testing.T) {
	id, err := TaskID(task)
	require.NoError(t, err)
	require.Equal(t, task, id)
	bad := map[string]string{
		"empty":        "",
		"upper case":   strings.ToUpper(task),
		"braces":       "{" + task + "}",
		"urn":          "urn:uuid:" + task,
		"no hyphens":   strings.ReplaceAll(task, "-", ""),
		"nil":          "00000000-0000-0000-0000-000000000000",
		"traversal":    "../" + task[3:],
		"trailing":     task + "/",
		"slash inside": task[:8] + "/" + task[9:],
		"NUL":          task[:35] + "\x00",
		"not hex":      "zb6d3c7e-8f52-4a1e-9a59-3c1f2a4b5d6e",
		"over-long":    strings.Repeat(task, 30),
	}
	for label, s := range bad {
		t.Run(label, func(t *testing.T) {
			_, err := TaskID(s)
			require.Error(t, err)
			require.Equal(t, "artifacts.task_id", toolerr.As(err).Rule)
		})
	}
	_, err = TaskID(strings.ToUpper(task))
	require.Contains(t, toolerr.As(err).Hint, task, "the hint gives the canonical form")
}

func TestKeyRoundTrip(t *testing.T) {
	key := Key(task, "report.md")
	require.Equal(t, "tasks/"+task+"/artifacts/report.md", key)
	id, name, err := Parse(key)
	require.NoError(t, err)
	require.Equal(t, task, id)
	require.Equal(t, "report.md", name)

	id, name, err = ParseURI(URI(task, "report.md"))
	require.NoError(t, err)
	require.Equal(t, []string{task, "report.md"}, []string{id, name})
}

func TestParseRefuses(t *testing.T) {
	other := "11111111-2222-4333-8444-555555555555"
	bad := map[string]string{
		"empty":                 "",
		"bare name":             "report.md",
		"dot-dot to secrets":    "tasks/../secrets/x",
		"leading slash":         "/" + Key(task, "x"),
		"double slash":          "tasks//" + task + "/artifacts/x",
		"url-encoded slash":     "tasks%2F" + task + "%2Fartifacts%2Fx",
		"url-encoded name":      Key(task, "a%2e%2e"),
		"cross-task via name":   Key(task, "../../"+other+"/artifacts/x"),
		"cross-task via parent": "tasks/" + task + "/../" + other + "/artifacts/x",
		"dot segment":           "tasks/" + task + "/./artifacts/x",
		"other prefix":          "secrets/" + task + "/artifacts/x",
		"other folder":          "tasks/" + task + "/private/x",
		"missing name":          "tasks/" + task + "/artifacts/",
		"nested name":           Key(task, "a/b"),
		"upper-case uuid":       Key(strings.ToUpper(task), "x"),
		"backslash":             `tasks\` + task + `\artifacts\x`,
		"over-long":             Key(task, strings.Repeat("x", MaxKeyBytes)),
		"NUL":                   Key(task, "x\x00"),
		"scheme":                "s3://bucket/" + Key(task, "x"),
		"query":                 Key(task, "x?versionId=1"),
		"invalid UTF-8":         Key(task, "\xff"),
		"trailing slash":        Key(task, "x") + "/",
		"uri instead of key":    URI(task, "x"),
	}
	for label, key := range bad {
		t.Run(label, func(t *testing.T) {
			_, _, err := Parse(key)
			require.Error(t, err)
			require.Equal(t, toolerr.InvalidArgument, toolerr.CodeOf(err))
		})
	}
}

func TestParseURIRefuses(t *testing.T) {
	bad := []string{
		"", "artifact://tasks/" + task, "artifact://tasks/" + task + "/", "artifact://tasks/" + task + "/a/b",
		"artifact://tasks/../secrets/x", "artifact://tasks/" + task + "/..%2fx", "file:///etc/passwd",
		"artifact://" + Key(task, "x"), "ARTIFACT://tasks/" + task + "/x", "artifact://tasks/" + task + "/x#frag",
	}
	for _, uri := range bad {
		_, _, err := ParseURI(uri)
		require.Error(t, err, uri)
	}
}
