package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// artifactEnv is the e2e environment plus the artifact store settings of
// `scripts/services env`.
func artifactEnv(t *testing.T) (ws string, env []string) {
	testenv.Need(t, "TOOLWARDEN_ARTIFACTS_ENDPOINT")
	ws, env = workspace(t)
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TOOLWARDEN_ARTIFACTS_") {
			env = append(env, kv)
		}
	}
	return ws, env
}

// TestArtifactsBinary drives the artifact tools and resources of the real
// binary over stdio against the shared MinIO.
func TestArtifactsBinary(t *testing.T) {
	ws, env := artifactEnv(t)
	c, err := client.NewStdioMCPClient(binary, env, "serve", "--workspace", ws, "--allow", "*_artifact*",
		"--approval", "store_artifact=allow") // this client cannot approve; approval_e2e_test.go asks
	require.NoError(t, err)
	defer c.Close()
	initialize(t, c)

	task := uuid.NewString()
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, args
		res, err := c.CallTool(ctxT(t), req)
		require.NoError(t, err)
		return res
	}
	res := call("store_artifact", map[string]any{"task_id": task, "name": "hello.txt", "content": "hello artifact\n", "encoding": "text"})
	require.False(t, res.IsError, "%+v", res.Content)
	require.Contains(t, res.Content[0].(mcp.TextContent).Text, `"key":"tasks/`+task+`/artifacts/hello.txt"`)
	res = call("retrieve_artifact", map[string]any{"key": "tasks/" + task + "/artifacts/hello.txt"})
	require.False(t, res.IsError, "%+v", res.Content)
	require.Contains(t, res.Content[0].(mcp.TextContent).Text, `"content":"hello artifact\n"`)
	res = call("retrieve_artifact", map[string]any{"key": "tasks/" + task + "/artifacts/../../x"})
	require.True(t, res.IsError)

	req := mcp.ReadResourceRequest{}
	req.Params.URI = "artifact://tasks/" + task + "/hello.txt"
	read, err := c.ReadResource(ctxT(t), req)
	require.NoError(t, err)
	require.Equal(t, "hello artifact\n", read.Contents[0].(mcp.TextResourceContents).Text)
}

// TestArtifactsConfigCheck: config check advertises the artifact tools when
// the store opens, and names the reason when the credentials are wrong.
func TestArtifactsConfigCheck(t *testing.T) {
	ws, env := artifactEnv(t)
	cfg := filepath.Join(t.TempDir(), "toolwarden.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("workspace: "+ws+"\npolicy:\n  allow: [list_artifacts]\n"), 0o644))
	check := func(env []string) string {
		cmd := exec.Command(binary, "config", "check", "--config", cfg)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return string(out)
	}
	out := check(env)
	require.Contains(t, out, "advertised_tools:\n  - list_artifacts\n")
	require.NotContains(t, out, "toolset: artifacts")
	require.NotContains(t, out, os.Getenv("TOOLWARDEN_ARTIFACTS_SECRET_KEY"), "config check never prints the secret")

	out = check(append(env, "TOOLWARDEN_ARTIFACTS_SECRET_KEY=wrong-secret-0123456789"))
	require.Contains(t, out, "  - toolset: artifacts\n")
	require.Contains(t, out, "SignatureDoesNotMatch")
	require.Contains(t, out, "advertised_tools: []")
}

// TestArtifactsExampleConfig keeps configs/examples/artifacts.yaml valid.
// Without the credentials it names, the toolset is reported unavailable
// before any request is sent.
func TestArtifactsExampleConfig(t *testing.T) {
	_, env := workspace(t)
	cmd := exec.Command(binary, "config", "check", "--config", "../../configs/examples/artifacts.yaml")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "toolset: artifacts")
	require.Contains(t, string(out), "ARTIFACTS_ACCESS_KEY_ID")
}
