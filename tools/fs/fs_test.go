package fs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/fs"
)

const (
	secretText = "outside secret TODO\n"
	tempName   = ".toolwarden-tmp-0123456789abcdef"
)

// smallLimits are tight enough that every cap is easy to reach.
func smallLimits() fs.Limits {
	return fs.Limits{
		MaxReadBytes:     64,
		MaxFilesPerRead:  3,
		MaxWriteBytes:    64,
		MaxTreeDepth:     3,
		MaxTreeEntries:   10,
		MaxSearchResults: 5,
		MaxGrepMatches:   5,
		MaxGrepFileBytes: 1024,
	}
}

// fixture is a workspace parent/ws next to parent/outside/secret.txt, with
// the file toolset over it.
type fixture struct {
	t       *testing.T
	parent  string
	dir     string // the workspace
	outside string // a directory next to it
	secret  string // parent/outside/secret.txt
	tools   map[string]tools.Tool
}

func newFixture(t *testing.T) *fixture { return newFixtureWith(t, smallLimits()) }

func newFixtureWith(t *testing.T, limits fs.Limits) *fixture {
	t.Helper()
	parent := t.TempDir()
	f := &fixture{
		t:       t,
		parent:  parent,
		dir:     filepath.Join(parent, "ws"),
		outside: filepath.Join(parent, "outside"),
		secret:  filepath.Join(parent, "outside", "secret.txt"),
	}
	require.NoError(t, os.Mkdir(f.dir, 0o755))
	require.NoError(t, os.Mkdir(f.outside, 0o755))
	require.NoError(t, os.WriteFile(f.secret, []byte(secretText), 0o644))
	ws, err := sandbox.Open(f.dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	f.tools = map[string]tools.Tool{}
	for _, tl := range fs.New(ws, limits).Tools() {
		require.NotContains(t, f.tools, tl.Tool.Name, "duplicate tool name")
		f.tools[tl.Tool.Name] = tl
	}
	return f
}

// write creates a workspace file, with its parents.
func (f *fixture) write(rel, content string) {
	f.t.Helper()
	name := filepath.Join(f.dir, filepath.FromSlash(rel))
	require.NoError(f.t, os.MkdirAll(filepath.Dir(name), 0o755))
	require.NoError(f.t, os.WriteFile(name, []byte(content), 0o644))
}

func (f *fixture) mkdir(rel string) {
	f.t.Helper()
	require.NoError(f.t, os.MkdirAll(filepath.Join(f.dir, filepath.FromSlash(rel)), 0o755))
}

func (f *fixture) symlink(target, rel string) {
	f.t.Helper()
	require.NoError(f.t, os.Symlink(target, filepath.Join(f.dir, filepath.FromSlash(rel))))
}

// read returns a workspace file's content.
func (f *fixture) read(rel string) string {
	f.t.Helper()
	data, err := os.ReadFile(filepath.Join(f.dir, filepath.FromSlash(rel)))
	require.NoError(f.t, err)
	return string(data)
}

func (f *fixture) exists(rel string) bool {
	_, err := os.Lstat(filepath.Join(f.dir, filepath.FromSlash(rel)))
	return err == nil
}

// requireOutsideIntact checks that nothing next to the workspace changed.
func (f *fixture) requireOutsideIntact() {
	f.t.Helper()
	data, err := os.ReadFile(f.secret)
	require.NoError(f.t, err)
	require.Equal(f.t, secretText, string(data))
	require.ElementsMatch(f.t, []string{"secret.txt"}, names(f.t, f.outside), "nothing may appear in the outside directory")
	require.ElementsMatch(f.t, []string{"outside", "ws"}, names(f.t, f.parent), "nothing may appear next to the workspace")
}

// requireNoTemp checks that no temporary file of an atomic write is left.
func (f *fixture) requireNoTemp() {
	f.t.Helper()
	require.NoError(f.t, filepath.WalkDir(f.parent, func(p string, d iofs.DirEntry, err error) error {
		require.NoError(f.t, err)
		if d.Name() != tempName {
			require.False(f.t, sandbox.IsTempName(d.Name()), "temporary file left behind: %s", p)
		}
		return nil
	}))
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// call runs a tool's handler directly, as the MCP server would.
func (f *fixture) call(name string, args map[string]any) *mcp.CallToolResult {
	f.t.Helper()
	return f.callCtx(context.Background(), name, args)
}

// callCtx is call under ctx.
func (f *fixture) callCtx(ctx context.Context, name string, args map[string]any) *mcp.CallToolResult {
	f.t.Helper()
	tl, ok := f.tools[name]
	require.True(f.t, ok, "no tool %q", name)
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := tl.Handler(ctx, req)
	require.NoError(f.t, err, "handlers report failures in the result, not as a Go error")
	require.NotNil(f.t, res)
	return res
}

// callOK runs a tool that must succeed and decodes its structured result.
func callOK[Out any](f *fixture, name string, args map[string]any) Out {
	f.t.Helper()
	res := f.call(name, args)
	require.False(f.t, res.IsError, "%s(%v) failed: %s", name, args, resultText(f.t, res))
	require.NotNil(f.t, res.StructuredContent)
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(f.t, err)
	var out Out
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	require.NoError(f.t, dec.Decode(&out))
	return out
}

// callErr runs a tool that must fail with code and returns the error the model sees.
func callErr(f *fixture, name string, args map[string]any, code toolerr.Code) toolerr.Error {
	f.t.Helper()
	res := f.call(name, args)
	e := resultError(f.t, res)
	require.Equal(f.t, code, e.Code, "%s(%v): %s", name, args, e.Message)
	return e
}

// resultError decodes the JSON error of a failed result.
func resultError(t *testing.T, res *mcp.CallToolResult) toolerr.Error {
	t.Helper()
	require.True(t, res.IsError, "expected an error, got %s", resultText(t, res))
	require.Nil(t, res.StructuredContent, "an error carries no structured content")
	e, ok := toolerr.FromResult(res)
	require.True(t, ok, resultText(t, res))
	require.Equal(t, e.Text(), resultText(t, res), "the text says the same as _meta")
	require.NotEmpty(t, e.Code)
	require.NotEmpty(t, e.Message)
	return e
}

func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	require.NotEmpty(t, res.Content)
	tc, ok := res.Content[0].(mcp.TextContent)
	require.True(t, ok, "first content is %T, want mcp.TextContent", res.Content[0])
	return tc.Text
}

// validArgs are arguments every tool accepts on the fixture of
// TestToolsRefuseOutsidePaths; each test case replaces one path argument.
func validArgs() map[string]map[string]any {
	return map[string]map[string]any{
		"read_file":           {"path": "a.txt"},
		"read_multiple_files": {"paths": []any{"a.txt"}},
		"list_directory":      {"path": "."},
		"directory_tree":      {"path": "."},
		"search_files":        {"path": ".", "pattern": "**/*"},
		"grep_files":          {"path": ".", "pattern": "TODO"},
		"file_info":           {"path": "a.txt"},
		"write_file":          {"path": "new.txt", "content": "x"},
		"edit_file":           {"path": "a.txt", "edits": []any{map[string]any{"old_text": "TODO", "new_text": "DONE"}}},
		"create_directory":    {"path": "newdir"},
		"move_file":           {"source": "a.txt", "destination": "b.txt"},
		"delete_file":         {"path": "a.txt"},
	}
}

func outsideFixture(t *testing.T) *fixture {
	f := newFixture(t)
	f.write("a.txt", "TODO\n")
	f.symlink("../outside", "link")
	return f
}

// TestToolsRefuseOutsidePaths calls every tool with every path argument set
// to a path outside the workspace. "/etc/passwd" is only given to read-only
// tools: the write tools get an absolute path into the fixture's own outside
// directory instead, so that a regression could not damage the host.
func TestToolsRefuseOutsidePaths(t *testing.T) {
	base := validArgs()
	f := outsideFixture(t)
	for name, tl := range f.tools {
		if len(tl.Meta.PathArgs) > 0 {
			require.Contains(t, base, name, "add tool %q to validArgs", name)
		}
	}
	t.Run("valid arguments succeed", func(t *testing.T) {
		for name, args := range base {
			t.Run(name, func(t *testing.T) {
				f := outsideFixture(t)
				res := f.call(name, args)
				require.False(t, res.IsError, resultText(t, res))
			})
		}
	})

	type hostile struct {
		path     string
		code     toolerr.Code
		readOnly bool
	}
	hostiles := func(f *fixture) []hostile {
		return []hostile{
			{"../x", toolerr.PathOutsideWorkspace, false},
			{"../outside/secret.txt", toolerr.PathOutsideWorkspace, false},
			{"a/../../outside/secret.txt", toolerr.PathOutsideWorkspace, false},
			{f.secret, toolerr.PathOutsideWorkspace, false},
			{"/etc/passwd", toolerr.PathOutsideWorkspace, true},
			{"link/secret.txt", toolerr.PathSymlinkEscape, false},
		}
	}
	for _, tl := range f.tools {
		name := tl.Tool.Name
		readOnly := tl.Tool.Annotations.ReadOnlyHint != nil && *tl.Tool.Annotations.ReadOnlyHint
		for _, arg := range tl.Meta.PathArgs {
			for i, h := range hostiles(f) {
				if h.readOnly && !readOnly {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/%d", name, arg, i), func(t *testing.T) {
					f := outsideFixture(t)
					h := hostiles(f)[i]
					args := map[string]any{}
					for k, v := range base[name] {
						args[k] = v
					}
					if _, isList := args[arg].([]any); isList {
						args[arg] = []any{h.path}
					} else {
						args[arg] = h.path
					}
					res := f.call(name, args)
					requireRefused(t, res, h.code)
					require.NotContains(t, resultText(t, res), "outside secret", "no outside content may leak")
					f.requireOutsideIntact()
				})
			}
		}
	}
}

// requireRefused checks that res refuses the call with code, either as a
// whole or, for read_multiple_files, for its only file.
func requireRefused(t *testing.T, res *mcp.CallToolResult, code toolerr.Code) {
	t.Helper()
	if res.IsError {
		require.Equal(t, code, resultError(t, res).Code)
		return
	}
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var out fs.ReadMultipleOut
	require.NoError(t, json.Unmarshal(raw, &out))
	require.Len(t, out.Files, 1, "the call succeeded: %s", raw)
	require.NotNil(t, out.Files[0].Error, "the file was read: %s", raw)
	require.Equal(t, code, out.Files[0].Error.Code)
	require.Empty(t, out.Files[0].Content)
}

// writeOutside creates a file in the directory next to the workspace.
func writeOutside(f *fixture, name, content string) error {
	return os.WriteFile(filepath.Join(f.outside, name), []byte(content), 0o644)
}

// on returns f reporting to t, for subtests sharing a fixture.
func (f *fixture) on(t *testing.T) *fixture {
	g := *f
	g.t = t
	return &g
}
