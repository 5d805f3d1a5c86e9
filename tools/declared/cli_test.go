package declared

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/sandbox"
)

func ptr[T any](v T) *T { return &v }

// grepDecl has a param before "--" (could be a flag), one inside a fixed
// flag, and a path and an optional string after "--".
var grepDecl = configs.DeclaredTool{
	Name: "grep_code", Type: configs.ToolCLI,
	Command: []string{"/usr/bin/grep", "-n", "{mode}", "--max-count={max}", "--", "{query}", "{file}"},
	Params: []configs.ToolParam{
		{Name: "mode", Type: configs.ParamString, Required: true, Enum: []string{"-F", "-E"}, AllowFlagLike: true},
		{Name: "max", Type: configs.ParamInteger, Minimum: ptr[int64](1), Maximum: ptr[int64](100)},
		{Name: "query", Type: configs.ParamString, Required: true, MaxLength: 20},
		{Name: "file", Type: configs.ParamFilepath, Required: true},
	},
}

func workspace(t *testing.T) *sandbox.Workspace {
	t.Helper()
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "src", "a.go"), []byte("package a\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(parent, "secret"), []byte("s"), 0o644))
	require.NoError(t, os.Symlink("../secret", filepath.Join(ws, "link")))
	w, err := sandbox.Open(ws)
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })
	return w
}

func argvOf(t *testing.T, d configs.DeclaredTool, ws *sandbox.Workspace, args map[string]any) ([]string, error) {
	t.Helper()
	vals, err := newChecker(d, ws).values(args)
	if err != nil {
		return nil, err
	}
	return Argv(d, vals)
}

func TestArgv(t *testing.T) {
	ws := workspace(t)
	ok := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"all params", map[string]any{"mode": "-F", "max": float64(5), "query": "x; id", "file": "src/a.go"},
			[]string{"/usr/bin/grep", "-n", "-F", "--max-count=5", "--", "x; id", "/workspace/src/a.go"}},
		{"optional dropped", map[string]any{"mode": "-E", "query": "$(id)", "file": "src/a.go"},
			[]string{"/usr/bin/grep", "-n", "-E", "--", "$(id)", "/workspace/src/a.go"}},
		{"flag-like after --", map[string]any{"mode": "-F", "query": "--output=/x", "file": "./src/../src/a.go"},
			[]string{"/usr/bin/grep", "-n", "-F", "--", "--output=/x", "/workspace/src/a.go"}},
		{"root dir", map[string]any{"mode": "-F", "query": "a\nb", "file": "."},
			[]string{"/usr/bin/grep", "-n", "-F", "--", "a\nb", "/workspace"}},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			got, err := argvOf(t, grepDecl, ws, tc.args)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	bad := []struct {
		name string
		args map[string]any
		code toolerr.Code
		rule string
	}{
		{"enum", map[string]any{"mode": "-r", "query": "x", "file": "src/a.go"}, toolerr.InvalidEnum, "tools.grep_code.params.mode.enum"},
		{"range", map[string]any{"mode": "-F", "max": float64(0), "query": "x", "file": "src/a.go"}, toolerr.InvalidArgument, "tools.grep_code.params.max.range"},
		{"fraction", map[string]any{"mode": "-F", "max": 1.5, "query": "x", "file": "src/a.go"}, toolerr.InvalidSchema, "tools.grep_code.params.max.type"},
		{"too long", map[string]any{"mode": "-F", "query": strings.Repeat("é", 21), "file": "src/a.go"}, toolerr.TooLarge, "tools.grep_code.params.query.max_length"},
		{"traversal", map[string]any{"mode": "-F", "query": "x", "file": "../secret"}, toolerr.PathOutsideWorkspace, "path.inside_workspace"},
		{"absolute", map[string]any{"mode": "-F", "query": "x", "file": "/etc/passwd"}, toolerr.PathOutsideWorkspace, "path.relative"},
		{"symlink escape", map[string]any{"mode": "-F", "query": "x", "file": "link"}, toolerr.PathSymlinkEscape, "path.symlink_inside_workspace"},
		{"backslash", map[string]any{"mode": "-F", "query": "x", "file": `..\secret`}, toolerr.PathInvalid, "path.no_backslash"},
		{"missing", map[string]any{"mode": "-F", "file": "src/a.go"}, toolerr.InvalidSchema, "tools.grep_code.params.query.required"},
		{"unknown", map[string]any{"mode": "-F", "query": "x", "file": "src/a.go", "exec": "id"}, toolerr.InvalidSchema, "args.schema"},
		{"wrong type", map[string]any{"mode": "-F", "query": []any{"a", "b"}, "file": "src/a.go"}, toolerr.InvalidSchema, "tools.grep_code.params.query.type"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := argvOf(t, grepDecl, ws, tc.args)
			require.Error(t, err)
			e := toolerr.As(err)
			require.Equal(t, tc.code, e.Code, e.Message)
			require.Equal(t, tc.rule, e.Rule)
		})
	}
	d := grepDecl
	d.Command = []string{"/usr/bin/grep", "{query}", "--", "{file}"}
	d.Params = grepDecl.Params[2:]
	_, err := argvOf(t, d, ws, map[string]any{"query": "-rf", "file": "src/a.go"})
	require.Equal(t, toolerr.FlagNotAllowed, toolerr.CodeOf(err))
	d.Params[0].AllowFlagLike = true
	got, err := argvOf(t, d, ws, map[string]any{"query": "-rf", "file": "src/a.go"})
	require.NoError(t, err, "allow_flag_like lets it through")
	require.Equal(t, []string{"/usr/bin/grep", "-rf", "--", "/workspace/src/a.go"}, got)
}

func TestURLParam(t *testing.T) {
	d := configs.DeclaredTool{Name: "fetch", Params: []configs.ToolParam{{Name: "u", Type: configs.ParamURL, Required: true, Hosts: []string{"example.com", "*.example.org"}}}}
	c := newChecker(d, nil)
	for _, u := range []string{"https://example.com/x?q=1", "https://docs.example.org/", "https://EXAMPLE.com./"} {
		_, err := c.values(map[string]any{"u": u})
		require.NoError(t, err, u)
	}
	for u, rule := range map[string]string{
		"http://example.com/":                  "tools.fetch.params.u.schemes",
		"javascript:alert(1)":                  "tools.fetch.params.u.url",
		"file:///etc/passwd":                   "tools.fetch.params.u.url",
		"https://example.com.evil.net/":        "tools.fetch.params.u.hosts",
		"https://evil.net/?example.com":        "tools.fetch.params.u.hosts",
		"https://example.com@evil.net/":        "tools.fetch.params.u.url",
		"https://example.org/":                 "tools.fetch.params.u.hosts",
		"//example.com/x":                      "tools.fetch.params.u.url",
		"https://" + strings.Repeat("a", 3000): "tools.fetch.params.u.max_length",
		// Hosts that only end in an allowed name to Go: a parser that maps
		// them (IDNA, NFKC) may see a fullwidth "/" or "#" and another host.
		"https://evil.net\uff0f.example.org/":    "tools.fetch.params.u.hosts",
		"https://evil.net%EF%BC%83.example.org/": "tools.fetch.params.u.hosts",
		"https://b\u00fccher.example.org/":       "tools.fetch.params.u.hosts",
	} {
		_, err := c.values(map[string]any{"u": u})
		require.Error(t, err, u)
		require.Equal(t, rule, toolerr.As(err).Rule, u)
	}
}

func TestInputSchema(t *testing.T) {
	var s map[string]any
	require.NoError(t, json.Unmarshal(InputSchema(grepDecl), &s))
	require.Equal(t, "object", s["type"])
	require.Equal(t, false, s["additionalProperties"])
	require.Equal(t, []any{"mode", "query", "file"}, s["required"])
	props := s["properties"].(map[string]any)
	require.Equal(t, []any{"-F", "-E"}, props["mode"].(map[string]any)["enum"])
	require.Equal(t, float64(1), props["max"].(map[string]any)["minimum"])
	require.Equal(t, float64(100), props["max"].(map[string]any)["maximum"])
	require.Equal(t, "integer", props["max"].(map[string]any)["type"])
	require.Equal(t, float64(20), props["query"].(map[string]any)["maxLength"])
	require.Contains(t, props["file"].(map[string]any)["description"], "relative to the workspace root")
	for name, p := range props {
		require.NotEmpty(t, p.(map[string]any)["description"], name)
	}
	tool := CLI{}.Tool(configs.DeclaredTool{Name: "t_x", Type: configs.ToolCLI, Description: "X.", Command: []string{"/usr/bin/true"}})
	require.JSONEq(t, `{"type":"object","properties":{},"additionalProperties":false}`, string(tool.Tool.RawInputSchema))
	require.Equal(t, []string{"proc:exec:/usr/bin/true"}, tool.Meta.Capabilities)
	require.True(t, tool.Meta.RequiresApproval, "approval is the default")
}

// FuzzArgv: whatever the model sends, each placeholder yields exactly one
// argument, and nothing before "--" starts with "-" unless allowed.
func FuzzArgv(f *testing.F) {
	for _, s := range []string{"x; ls -la", "$(id)", "`id`", "--output=/tmp/x", "a\nb", "-", "", "{query}"} {
		f.Add(s, s)
	}
	d := configs.DeclaredTool{Name: "t_x", Command: []string{"/usr/bin/echo", "{a}", "-x={b}", "--", "{b}"},
		Params: []configs.ToolParam{{Name: "a", Type: configs.ParamString, Required: true}, {Name: "b", Type: configs.ParamString, Required: true}}}
	c := newChecker(d, nil)
	f.Fuzz(func(t *testing.T, a, b string) {
		vals, err := c.values(map[string]any{"a": a, "b": b})
		if err != nil {
			return
		}
		argv, err := Argv(d, vals)
		if err != nil {
			require.True(t, strings.HasPrefix(a, "-"))
			return
		}
		require.Equal(t, []string{"/usr/bin/echo", a, "-x=" + b, "--", b}, argv)
	})
}

func BenchmarkCheckAndArgv(b *testing.B) {
	// A string instead of a filepath: the benchmark measures the checks
	// and substitution, not a stat of the workspace.
	d := grepDecl
	d.Params = append([]configs.ToolParam(nil), grepDecl.Params[:3]...)
	d.Params = append(d.Params, configs.ToolParam{Name: "file", Type: configs.ParamString, Required: true})
	c := newChecker(d, nil)
	args := map[string]any{"mode": "-F", "max": float64(5), "query": "needle; $(id)", "file": "src/a.go"}
	b.ReportAllocs()
	for b.Loop() {
		vals, err := c.values(args)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Argv(d, vals); err != nil {
			b.Fatal(err)
		}
	}
}
