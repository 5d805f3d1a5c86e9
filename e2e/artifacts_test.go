package e2e

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
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
		"--approval", "store_artifact=allow") // this client cannot approve; approval_test.go asks
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
	cmd := exec.Command(binary, "config", "check", "--config", "../configs/examples/artifacts.yaml")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "toolset: artifacts")
	require.Contains(t, string(out), "ARTIFACTS_ACCESS_KEY_ID")
}

// TestArtifactsBinarySurvivesStoreCrash: MinIO killed (SIGKILL) during a
// store_artifact call of the real binary: the call ends with
// backend.unavailable, no partial artifact is ever listed, and once MinIO
// is back the same server stores and lists again, without a restart.
func TestArtifactsBinarySurvivesStoreCrash(t *testing.T) {
	m := testenv.StartMinIO(t)
	ws, env := workspace(t)
	env = append(env, "TOOLWARDEN_ARTIFACTS_ENDPOINT="+m.Endpoint, "TOOLWARDEN_ARTIFACTS_BUCKET="+m.Bucket,
		"TOOLWARDEN_ARTIFACTS_USE_TLS=false", "TOOLWARDEN_ARTIFACTS_REGION=us-east-1",
		"TOOLWARDEN_ARTIFACTS_ACCESS_KEY="+m.AccessKey, "TOOLWARDEN_ARTIFACTS_SECRET_KEY="+m.SecretKey)
	c, err := client.NewStdioMCPClient(binary, env, "serve", "--workspace", ws, "--allow", "*_artifact*",
		"--approval", "store_artifact=allow")
	require.NoError(t, err)
	defer c.Close()
	initialize(t, c)
	task := uuid.NewString()
	store := func(name, content string) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name = "store_artifact"
		req.Params.Arguments = map[string]any{"task_id": task, "name": name, "content": content, "encoding": "text"}
		res, err := c.CallTool(ctxT(t), req)
		require.NoError(t, err)
		return res
	}
	listed := func() string {
		req := mcp.CallToolRequest{}
		req.Params.Name = "list_artifacts"
		req.Params.Arguments = map[string]any{"task_id": task}
		res, err := c.CallTool(ctxT(t), req)
		require.NoError(t, err)
		require.False(t, res.IsError, "%+v", res.Content)
		return res.Content[0].(mcp.TextContent).Text
	}
	require.False(t, store("before.txt", "stored before the crash\n").IsError)

	// Kill the store while big uploads are in flight.
	big := strings.Repeat("0123456789abcdef", 512<<10/16)
	results := make(chan *mcp.CallToolResult, 4)
	for i := range 4 {
		go func() { results <- store("big"+string(rune('a'+i))+".txt", big) }()
	}
	time.Sleep(30 * time.Millisecond)
	m.Kill()
	for range 4 {
		res := <-results
		if res.IsError {
			require.Contains(t, res.Content[0].(mcp.TextContent).Text, "backend.unavailable: ")
		}
	}
	res := store("during.txt", "x")
	require.True(t, res.IsError, "the store is down")
	require.Contains(t, res.Content[0].(mcp.TextContent).Text, "backend.unavailable: ")

	m.Start(t)
	require.Eventually(t, func() bool { return !store("after.txt", "stored after the restart\n").IsError },
		30*time.Second, 200*time.Millisecond, "the same server stores again once MinIO is back")
	list := listed()
	require.Contains(t, list, "before.txt")
	require.Contains(t, list, "after.txt")
	require.NotContains(t, list, "during.txt")
	// An upload cut by the crash is absent or whole, never partial.
	var got struct {
		Artifacts []struct {
			Name string
			Size int
		}
	}
	require.NoError(t, json.Unmarshal([]byte(list), &got))
	for _, a := range got.Artifacts {
		if strings.HasPrefix(a.Name, "big") {
			require.Equal(t, len(big), a.Size, "%s is whole", a.Name)
		}
	}
}

// TestArtifactsBinaryRanges: a 600 KiB artifact, refused whole, is read
// back through the real binary in three ranges whose bytes hash to what
// store_artifact reported; a hostile range is refused naming its rule.
func TestArtifactsBinaryRanges(t *testing.T) {
	ws, env := artifactEnv(t)
	c, err := client.NewStdioMCPClient(binary, env, "serve", "--workspace", ws, "--allow", "*_artifact*",
		"--approval", "store_artifact=allow")
	require.NoError(t, err)
	defer c.Close()
	initialize(t, c)
	call := func(name string, args map[string]any) map[string]any {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, args
		res, err := c.CallTool(ctxT(t), req)
		require.NoError(t, err)
		var out map[string]any
		if e, ok := toolerr.FromResult(res); ok {
			return map[string]any{"isError": true, "code": string(e.Code), "message": e.Message, "hint": e.Hint, "rule": e.Rule}
		}
		require.NoError(t, json.Unmarshal([]byte(res.Content[0].(mcp.TextContent).Text), &out))
		return out
	}

	data := make([]byte, 600<<10)
	for i := range data {
		data[i] = byte(i*7 + i/251)
	}
	task := uuid.NewString()
	stored := call("store_artifact", map[string]any{"task_id": task, "name": "big.bin",
		"content": base64.StdEncoding.EncodeToString(data), "encoding": "base64"})
	require.Nil(t, stored["isError"], "%v", stored)

	whole := call("retrieve_artifact", map[string]any{"task_id": task, "name": "big.bin"})
	require.Equal(t, true, whole["isError"])
	require.Equal(t, "artifacts.max_inline_bytes", whole["rule"], "%v", whole)

	var back []byte
	ranges := 0
	for off := float64(0); ; {
		ranges++
		out := call("retrieve_artifact", map[string]any{"task_id": task, "name": "big.bin", "offset": off})
		require.Nil(t, out["isError"], "%v", out)
		require.Equal(t, float64(len(data)), out["size"])
		chunk, err := base64.StdEncoding.DecodeString(out["content"].(string))
		require.NoError(t, err)
		back = append(back, chunk...)
		if out["truncated"] != true {
			break
		}
		off = out["next_offset"].(float64)
	}
	require.Equal(t, 3, ranges)
	sum := sha256.Sum256(back)
	require.Equal(t, stored["sha256"], hex.EncodeToString(sum[:]))

	for _, c := range []struct {
		args map[string]any
		rule string
	}{
		{map[string]any{"offset": -1}, "artifacts.range"},
		{map[string]any{"offset": len(data) + 1}, "artifacts.range"},
		{map[string]any{"offset": 0, "length": 1 << 40}, "artifacts.max_inline_bytes"},
	} {
		c.args["task_id"], c.args["name"] = task, "big.bin"
		out := call("retrieve_artifact", c.args)
		require.Equal(t, true, out["isError"], "%v", c.args)
		require.Equal(t, c.rule, out["rule"], "%v", out)
	}
}
