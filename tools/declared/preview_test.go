package declared

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools"
)

func previewOf(t *testing.T, tool tools.Tool, args map[string]any) (string, error) {
	t.Helper()
	require.NotNil(t, tool.Meta.Preview, "declared tools preview what they run")
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	return tool.Meta.Preview(context.Background(), raw)
}

// TestCLIPreviewShowsTheArgv: the approval shows the argv that will run,
// each element one shell word, hostile values escaped so they neither
// look like shell syntax nor break the prompt's lines.
func TestCLIPreviewShowsTheArgv(t *testing.T) {
	c := CLI{Workspace: workspace(t), Limits: configs.ExecLimits{OutputBytes: 64 << 10}}
	d := grepDecl
	d.Timeout = 7e9
	tool := c.Tool(d)
	for name, tc := range map[string]struct {
		query, want string
	}{
		"plain":        {"needle", `/usr/bin/grep -n -F --max-count=5 -- needle /workspace/src/a.go`},
		"substitution": {"$(id)", `/usr/bin/grep -n -F --max-count=5 -- '$(id)' /workspace/src/a.go`},
		"quotes":       {`it's "x"`, `/usr/bin/grep -n -F --max-count=5 -- 'it'\''s "x"' /workspace/src/a.go`},
		"newline":      {"a\nrm -rf /", `/usr/bin/grep -n -F --max-count=5 -- $'a\nrm -rf /' /workspace/src/a.go`},
		"bidi":         {"x\u202eexe.txt", `/usr/bin/grep -n -F --max-count=5 -- $'x\u202eexe.txt' /workspace/src/a.go`},
		"spaces":       {"a b;c", `/usr/bin/grep -n -F --max-count=5 -- 'a b;c' /workspace/src/a.go`},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := previewOf(t, tool, map[string]any{"mode": "-F", "max": 5, "query": tc.query, "file": "src/a.go"})
			require.NoError(t, err)
			require.Equal(t, "Run declared tool grep_code in the sandbox (no shell; one argument per quoted word):\n"+tc.want+
				"\nNo network; workspace read-only at /workspace; timeout 7s, output 64 KiB per stream.", got)
		})
	}

	_, err := previewOf(t, tool, map[string]any{"mode": "-F", "query": "x", "file": "../secret"})
	require.Error(t, err, "a call that would fail is refused before anyone is asked")
	require.NotNil(t, toolerr.As(err))
}

// TestHTTPPreviewShowsTheRequest: method, exact URL and body, the
// credential's header named with its variable and its value never shown.
func TestHTTPPreviewShowsTheRequest(t *testing.T) {
	d := httpDecl("https://api.example.com", "/search")
	tool := HTTP{Getenv: getenv}.Tool(d)
	got, err := previewOf(t, tool, map[string]any{"q": "$(id)\n'\"x", "n": 3})
	require.NoError(t, err)
	require.Equal(t, "Send declared tool search_api's request:\nGET https://api.example.com/search?fixed=1&n=3&q=%24%28id%29%0A%27%22x\n"+
		"X-Api-Key: [secret from $SEARCH_KEY, not shown]\nNo body.", got)
	require.NotContains(t, got, apiKey)

	d.Method = "POST"
	d.Params = append(d.Params, configs.ToolParam{Name: "note", Type: configs.ParamString, In: "body"})
	d.Params[0].In = "query"
	d.APIKeyHeader = ""
	got, err = previewOf(t, HTTP{Getenv: getenv}.Tool(d), map[string]any{"q": "x", "n": 7, "note": "line1\nline2 \"$(id)\" 'q' \u202eevil"})
	require.NoError(t, err)
	require.Equal(t, "Send declared tool search_api's request:\nPOST https://api.example.com/search?fixed=1&q=x\n"+
		"Authorization: [secret from $SEARCH_KEY, not shown]\nContent-Type: application/json\n"+
		`Body: {"n":7,"note":"line1\nline2 \"$(id)\" 'q' \u202eevil"}`, got)
	require.NotContains(t, got, apiKey)

	_, err = previewOf(t, HTTP{Getenv: func(string) string { return "" }}.Tool(d), map[string]any{"q": "x"})
	require.Equal(t, "tools.search_api.credentials", toolerr.As(err).Rule, "a call that would fail is refused without asking")
}
