package mcpserver_test

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/toolerr"
	"github.com/toolwarden/toolwarden/tools/graph"
)

// neo4jInstance is a Neo4j of the test's own, started with scripts/services
// in a state directory and on a port of its own, so that stopping it
// disturbs no other test.
type neo4jInstance struct {
	env []string
	uri string
	// password is the generated password of user neo4j.
	password string
}

func startOwnNeo4j(t *testing.T) *neo4jInstance {
	t.Helper()
	testenv.Need(t, "TOOLWARDEN_GRAPH_URI") // the services can run here
	if testing.Short() {
		t.Skip("starts a second Neo4j (about a minute)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	n := &neo4jInstance{
		env: append(os.Environ(), "TOOLWARDEN_SERVICES_DIR="+t.TempDir(), "TOOLWARDEN_NEO4J_PORT="+strconv.Itoa(port)),
		uri: "bolt://127.0.0.1:" + strconv.Itoa(port),
	}
	n.services(t, "up")
	t.Cleanup(func() { n.services(t, "down") })
	for _, line := range strings.Split(n.services(t, "env"), "\n") {
		if v, ok := strings.CutPrefix(line, "export NEO4J_PASSWORD="); ok {
			n.password = v
		}
	}
	require.NotEmpty(t, n.password)
	return n
}

func (n *neo4jInstance) services(t *testing.T, cmd string) string {
	t.Helper()
	c := exec.Command(filepath.Join(pkgDir, "..", "scripts", "services"), cmd, "neo4j")
	c.Env = n.env
	out, err := c.Output()
	var stderr []byte
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "scripts/services %s neo4j: %s", cmd, stderr)
	return string(out)
}

// TestGraphSurvivesNeo4jRestart stops the server under a running
// toolwarden: calls fail with backend.unavailable, and succeed again once it
// is back, without restarting toolwarden.
func TestGraphSurvivesNeo4jRestart(t *testing.T) {
	n := startOwnNeo4j(t)
	t.Setenv("TOOLWARDEN_TEST_RESTART_PASSWORD", n.password)
	f := newFixture(t)
	f.cfg.Graph.URI = n.uri
	f.cfg.Graph.Username = "neo4j"
	f.cfg.Graph.PasswordEnv = "TOOLWARDEN_TEST_RESTART_PASSWORD"
	f.cfg.Policy.Allow = append(f.cfg.Policy.Allow, graphTools...)
	c := inProcess(t, f.server(t))

	m := call[graph.CreateMissionOut](t, c, "create_mission", map[string]any{"name": "restart", "description": ""})
	task := call[graph.CreateTaskOut](t, c, "create_task", map[string]any{"parent_id": m.MissionID, "description": "survives"})
	get := map[string]any{"task_id": task.TaskID}
	call[graph.TaskInfo](t, c, "get_task", get)

	n.services(t, "down")
	start := time.Now()
	e := errorOf(t, callTool(t, c, "get_task", get))
	require.Equal(t, toolerr.BackendUnavailable, e.Code, e.Message)
	require.Equal(t, "graph.backend", e.Rule)
	require.NotContains(t, e.Message, "127.0.0.1", "no connection details for the model")
	t.Logf("backend.unavailable after %s", time.Since(start))
	e = errorOf(t, callTool(t, c, "update_task_status", map[string]any{"task_id": task.TaskID, "status": "Failed"}))
	require.Equal(t, toolerr.BackendUnavailable, e.Code, e.Message)

	n.services(t, "up")
	info := call[graph.TaskInfo](t, c, "get_task", get)
	require.Equal(t, "survives", info.Description, "the data and the connection are back")
	upd := call[graph.UpdateStatusOut](t, c, "update_task_status", map[string]any{"task_id": task.TaskID, "status": "Completed"})
	require.Equal(t, graph.Pending, upd.PreviousStatus, "the failed write left nothing behind")
}
