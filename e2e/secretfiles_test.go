package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
)

const envSecret = "API_TOKEN=very-secret-value-in-dotenv"

// secretWorkspace adds a .env, its readable .env.example and a key to the
// e2e workspace.
func secretWorkspace(t *testing.T) (string, []string) {
	ws, env := workspace(t)
	for name, body := range map[string]string{".env": envSecret + "\n", ".env.example": "API_TOKEN=\n", "certs/server.pem": envSecret + "\n"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ws, name), []byte(body), 0o600))
	}
	return ws, env
}

func callText(t *testing.T, env []string, ws, tool, args string) (mcp.CallToolResult, string) {
	t.Helper()
	out, _ := runBinary(t, env, "call", "--workspace", ws, tool, args)
	res := resultOf(t, out)
	require.NotEmpty(t, res.Content, out)
	return res, res.Content[0].(mcp.TextContent).Text
}

// TestSecretFilesBinary: by default the built binary denies reading and
// writing .env and keys naming the rule, keeps .env.example readable,
// lists .env's name, and greps past it without reading it.
func TestSecretFilesBinary(t *testing.T) {
	t.Parallel()
	ws, env := secretWorkspace(t)
	res, text := callText(t, env, ws, "read_file", `{"path":".env"}`)
	require.True(t, res.IsError)
	require.True(t, strings.HasPrefix(text, "denied.capability: "), text)
	require.Contains(t, text, `capabilities.secret_files:"**/.env"`)
	require.NotContains(t, text, "very-secret")

	res, text = callText(t, env, ws, "read_multiple_files", `{"paths":["hello.txt","certs/server.pem"]}`)
	require.True(t, res.IsError)
	require.Contains(t, text, `capabilities.secret_files:"**/*.pem"`)

	res, text = callText(t, env, ws, "read_file", `{"path":".env.example"}`)
	require.False(t, res.IsError, text)
	require.Contains(t, text, "API_TOKEN=")

	res, text = callText(t, env, ws, "list_directory", `{"path":"."}`)
	require.False(t, res.IsError, text)
	require.Contains(t, text, ".env", "names are listed; contents are not read")

	res, text = callText(t, env, ws, "grep_files", `{"path":".","pattern":"API_TOKEN"}`)
	require.False(t, res.IsError, text)
	require.NotContains(t, text, "very-secret", "grep does not read secret files")
	require.Contains(t, text, ".env.example")

	out, status := runBinary(t, env, "policy", "explain", "--workspace", ws, "read_file", `{"path":".env"}`)
	require.Equal(t, 2, status, out)
	require.Contains(t, out, `capabilities.secret_files:"**/.env"`)

	out, status = runBinary(t, env, "config", "check", "--workspace", ws)
	require.Equal(t, 0, status, out)
	require.Contains(t, out, "secret_files_denied:")
	require.Contains(t, out, "'**/.env'")
}

// TestSecretFilesLiftedBinary: allow_secret_files lifts the denial, and
// config check lists it as a widening.
func TestSecretFilesLiftedBinary(t *testing.T) {
	t.Parallel()
	ws, env := secretWorkspace(t)
	cfg := writeConfig(t, ws, "capabilities:\n  allow_secret_files: true\n")
	out, status := runBinary(t, env, "config", "check", "--config", cfg)
	require.Equal(t, 0, status, out)
	require.Contains(t, out, "capabilities.allow_secret_files lifts the denial of secret files")
	out, _ = runBinary(t, env, "call", "--config", cfg, "read_file", `{"path":".env"}`)
	res := resultOf(t, out)
	require.False(t, res.IsError, out)
}
