package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/mcpserver"
	"go.yaml.in/yaml/v3"
)

// graphEnv is the environment `scripts/services env` prints, on top of env.
func graphEnv(t *testing.T, env []string) []string {
	t.Helper()
	v := testenv.Need(t, "TOOLWARDEN_GRAPH_URI", "TOOLWARDEN_GRAPH_USERNAME", "TOOLWARDEN_GRAPH_PASSWORD_ENV")
	return append(env, "TOOLWARDEN_GRAPH_URI="+v[0], "TOOLWARDEN_GRAPH_USERNAME="+v[1],
		"TOOLWARDEN_GRAPH_PASSWORD_ENV="+v[2], v[2]+"="+os.Getenv(v[2]))
}

func callJSON(t *testing.T, c *client.Client, tool string, args map[string]any) map[string]any {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(ctxT(t), req)
	require.NoError(t, err)
	text := res.Content[0].(mcp.TextContent).Text
	require.False(t, res.IsError, text)
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(text), &out))
	return out
}

// TestGraphStdioBinary drives the graph tools through the real binary over
// stdio, configured only by the service environment and --allow.
func TestGraphStdioBinary(t *testing.T) {
	ws, env := workspace(t)
	env = graphEnv(t, env)
	c, err := client.NewStdioMCPClient(binary, env, "serve", "--workspace", ws,
		"--allow", "create_mission", "--allow", "create_task", "--allow", "get_task", "--allow", "update_task_status",
		// The graph writes need approval; this client cannot give it, so the
		// operator trusts them for this run (approval_test.go asks).
		"--approval", "*=allow")
	require.NoError(t, err)
	defer c.Close()
	initialize(t, c)

	list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	require.Subset(t, names, []string{"create_mission", "create_task", "get_task", "update_task_status"})
	require.NotContains(t, names, "add_task_dependency", "graph tools not allowed stay hidden")

	m := callJSON(t, c, "create_mission", map[string]any{"name": "binary e2e", "description": "over stdio"})
	task := callJSON(t, c, "create_task", map[string]any{"parent_id": m["mission_id"], "description": "from the binary"})
	callJSON(t, c, "update_task_status", map[string]any{"task_id": task["task_id"], "status": "InProgress"})
	info := callJSON(t, c, "get_task", map[string]any{"task_id": task["task_id"]})
	require.Equal(t, "from the binary", info["description"])
	require.Equal(t, "InProgress", info["status"])
	require.Equal(t, m["mission_id"], info["mission_id"])
}

// effective is the part of `config check`'s YAML output these tests read.
type effective struct {
	Hidden      []string                `yaml:"hidden_tools"`
	Unavailable []mcpserver.Unavailable `yaml:"unavailable_toolsets,omitempty"`
}

// TestGraphConfigCheck: config check reports the graph toolset as
// available with the service environment, and says why not without it or
// with credentials Neo4j refuses.
func TestGraphConfigCheck(t *testing.T) {
	ws, env := workspace(t)
	check := func(env []string) effective {
		t.Helper()
		cmd := exec.Command(binary, "config", "check")
		cmd.Dir = ws
		cmd.Env = env
		out, err := cmd.Output()
		require.NoError(t, err, "an unavailable backend is no config error")
		var e effective
		require.NoError(t, yaml.Unmarshal(out, &e))
		return e
	}
	// The other toolsets' availability depends on their own environment.
	graphReason := func(e effective) string {
		for _, u := range e.Unavailable {
			if u.Toolset == "graph" {
				return u.Reason
			}
		}
		return ""
	}
	e := check(env)
	require.Contains(t, graphReason(e), "not configured: set graph.uri")

	genv := graphEnv(t, env)
	e = check(genv)
	require.Empty(t, graphReason(e))
	require.Contains(t, e.Hidden, "create_task", "connected, but hidden until allowed")

	// A user that does not exist, so that Neo4j's lock-out of repeated
	// failures cannot hit the real user that other tests log in as.
	e = check(append(genv, "TOOLWARDEN_GRAPH_USERNAME=toolwarden-e2e-nobody"))
	require.Contains(t, graphReason(e), "Neo.ClientError.Security.Unauthorized")
	require.NotContains(t, e.Hidden, "create_task", "an unavailable toolset's tools are not registered")
	pw := os.Getenv(os.Getenv("TOOLWARDEN_GRAPH_PASSWORD_ENV"))
	require.False(t, strings.Contains(graphReason(e), pw), "the password never appears")

	e = check(append(genv, "TOOLWARDEN_GRAPH_URI=bolt://127.0.0.1:1"))
	require.Contains(t, graphReason(e), "connection refused")
}

func TestGraphExampleConfig(t *testing.T) {
	ws, env := workspace(t)
	cmd := exec.Command(binary, "config", "check", "--config", "../configs/examples/graph.yaml")
	cmd.Env = append(env, "TOOLWARDEN_WORKSPACE="+ws, "NEO4J_PASSWORD=example")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), `policy.allow adds "create_task"`)
	require.Contains(t, string(out), "graph.uri connects the graph toolset to neo4j://localhost:7687")
}

// TestGraphBinarySurvivesNeo4jCrash kills (SIGKILL) a Neo4j of the test's
// own under the running binary, once with a call in flight: calls fail
// with backend.unavailable without connection details, a write cut by the
// crash leaves nothing behind, and calls succeed again once Neo4j is back,
// without restarting toolwarden.
func TestGraphBinarySurvivesNeo4jCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Neo4j of its own, twice (about two minutes)")
	}
	n := testenv.StartNeo4j(t)
	ws, env := workspace(t)
	env = append(env, "TOOLWARDEN_GRAPH_URI="+n.URI, "TOOLWARDEN_GRAPH_USERNAME=neo4j",
		"TOOLWARDEN_GRAPH_PASSWORD_ENV=TW_CRASH_PASSWORD", "TW_CRASH_PASSWORD="+n.Password)
	c, err := client.NewStdioMCPClient(binary, env, "serve", "--workspace", ws,
		"--allow", "create_mission", "--allow", "create_task", "--allow", "get_task", "--allow", "update_task_status",
		"--approval", "*=allow")
	require.NoError(t, err)
	defer c.Close()
	initialize(t, c)

	m := callJSON(t, c, "create_mission", map[string]any{"name": "crash", "description": ""})
	task := callJSON(t, c, "create_task", map[string]any{"parent_id": m["mission_id"], "description": "survives"})
	get := map[string]any{"task_id": task["task_id"]}
	callErr := func(tool string, args map[string]any) string {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = tool, args
		res, err := c.CallTool(ctxT(t), req)
		require.NoError(t, err)
		require.True(t, res.IsError, "%+v", res.Content)
		return res.Content[0].(mcp.TextContent).Text
	}

	inFlight := make(chan error, 1)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = "update_task_status"
		req.Params.Arguments = map[string]any{"task_id": task["task_id"], "status": "Failed"}
		_, err := c.CallTool(ctxT(t), req)
		inFlight <- err
	}()
	n.Kill(t)
	require.NoError(t, <-inFlight, "the in-flight call ends with a result, not a hang")
	text := callErr("get_task", get)
	require.Contains(t, text, "backend.unavailable: ")
	require.NotContains(t, text, "127.0.0.1", "no connection details for the model")
	require.Contains(t, callErr("update_task_status", map[string]any{"task_id": task["task_id"], "status": "Completed"}),
		"backend.unavailable: ")

	n.Start(t)
	info := callJSON(t, c, "get_task", get)
	require.Equal(t, "survives", info["description"], "the data and the connection are back")
	require.Contains(t, []any{"Pending", "Failed"}, info["status"], "the cut write landed whole or not at all")
	callJSON(t, c, "update_task_status", map[string]any{"task_id": task["task_id"], "status": "InProgress"})
}
