package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools/graph"
)

// graphTools are the graph toolset's names; the default policy hides them.
var graphTools = []string{"list_missions", "get_mission", "get_task", "list_child_tasks", "check_task_dependencies",
	"create_mission", "create_task", "update_task_status", "add_child_task", "add_task_dependency",
	"assign_agent_to_task", "link_artifact_to_task"}

// graphClient is an in-process client of a server connected to the Neo4j
// that scripts/services started, with the graph tools allowed.
func graphClient(t testing.TB) *client.Client {
	t.Helper()
	testenv.Need(t, "TOOLWARDEN_GRAPH_URI")
	f := newFixture(t)
	f.cfg.Policy.Allow = append(f.cfg.Policy.Allow, graphTools...)
	return inProcess(t, f.server(t))
}

// call calls tool and decodes its structured result.
func call[T any](t *testing.T, c *client.Client, tool string, args map[string]any) T {
	t.Helper()
	var out T
	structured(t, callTool(t, c, tool, args), &out)
	return out
}

// callCode calls tool and returns the error code of its result ("" for a
// success); it does not stop the test, so goroutines may use it.
func callCode(c *client.Client, tool string, args map[string]any) (toolerr.Code, *mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		return "", nil, err
	}
	return toolerr.ErrorCode(res), res, nil
}

// bareDriver is a driver of its own, to look at the graph behind the tools'
// back.
func bareDriver(t testing.TB) neo4j.DriverWithContext {
	t.Helper()
	v := testenv.Need(t, "TOOLWARDEN_GRAPH_URI", "TOOLWARDEN_GRAPH_USERNAME", "TOOLWARDEN_GRAPH_PASSWORD_ENV")
	d, err := neo4j.NewDriverWithContext(v[0], neo4j.BasicAuth(v[1], os.Getenv(v[2]), ""))
	require.NoError(t, err)
	t.Cleanup(func() { d.Close(context.Background()) })
	return d
}

func queryInt(t *testing.T, d neo4j.DriverWithContext, cypher string, params map[string]any) int64 {
	t.Helper()
	res, err := neo4j.ExecuteQuery(ctxT(t), d, cypher, params, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase("neo4j"))
	require.NoError(t, err)
	require.Len(t, res.Records, 1)
	n, ok := res.Records[0].Values[0].(int64)
	require.True(t, ok)
	return n
}

func TestGraphToolsEndToEnd(t *testing.T) {
	c := graphClient(t)
	list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err)
	require.Subset(t, toolNames(list.Tools), graphTools, "allowed graph tools are advertised")

	m := call[graph.CreateMissionOut](t, c, "create_mission", map[string]any{"name": "e2e mission", "description": "end to end"})
	require.NoError(t, uuid.Validate(m.MissionID))
	build := call[graph.CreateTaskOut](t, c, "create_task", map[string]any{"parent_id": m.MissionID, "description": "build"})
	test := call[graph.CreateTaskOut](t, c, "create_task", map[string]any{"parent_id": m.MissionID, "description": "test"})
	sub := call[graph.CreateTaskOut](t, c, "create_task", map[string]any{"parent_id": build.TaskID, "description": "compile"})
	require.Equal(t, graph.Pending, sub.Status)

	top := call[graph.ListChildrenOut](t, c, "list_child_tasks", map[string]any{"parent_id": m.MissionID})
	require.Equal(t, []graph.TaskSummary{{ID: build.TaskID, Description: "build", Status: graph.Pending},
		{ID: test.TaskID, Description: "test", Status: graph.Pending}}, top.Tasks)
	children := call[graph.ListChildrenOut](t, c, "list_child_tasks", map[string]any{"parent_id": build.TaskID})
	require.Equal(t, []graph.TaskSummary{{ID: sub.TaskID, Description: "compile", Status: graph.Pending}}, children.Tasks)

	dep := map[string]any{"task_id": test.TaskID, "depends_on_id": build.TaskID}
	require.True(t, call[graph.AddDependencyOut](t, c, "add_task_dependency", dep).Created)
	require.False(t, call[graph.AddDependencyOut](t, c, "add_task_dependency", dep).Created, "idempotent")
	check := call[graph.CheckDependenciesOut](t, c, "check_task_dependencies", map[string]any{"task_id": test.TaskID})
	require.False(t, check.AllSatisfied)
	require.Equal(t, 1, check.Total)
	require.Equal(t, []graph.TaskSummary{{ID: build.TaskID, Description: "build", Status: graph.Pending}}, check.Pending)

	upd := call[graph.UpdateStatusOut](t, c, "update_task_status", map[string]any{"task_id": build.TaskID, "status": "Completed"})
	require.Equal(t, graph.Pending, upd.PreviousStatus)
	check = call[graph.CheckDependenciesOut](t, c, "check_task_dependencies", map[string]any{"task_id": test.TaskID})
	require.True(t, check.AllSatisfied)
	require.Empty(t, check.Pending)

	as := call[graph.AssignOut](t, c, "assign_agent_to_task", map[string]any{"task_id": test.TaskID, "agent_id": "coder-1"})
	require.Empty(t, as.PreviousAgentID)
	as = call[graph.AssignOut](t, c, "assign_agent_to_task", map[string]any{"task_id": test.TaskID, "agent_id": "coder-2"})
	require.Equal(t, "coder-1", as.PreviousAgentID)

	key := "tasks/" + test.TaskID + "/artifacts/report.md"
	link := map[string]any{"task_id": test.TaskID, "artifact_key": key}
	require.True(t, call[graph.LinkArtifactOut](t, c, "link_artifact_to_task", link).Created)
	require.False(t, call[graph.LinkArtifactOut](t, c, "link_artifact_to_task", link).Created)

	moved := call[graph.AddChildOut](t, c, "add_child_task", map[string]any{"parent_id": test.TaskID, "child_id": sub.TaskID})
	require.True(t, moved.Changed)
	require.Equal(t, build.TaskID, moved.PreviousParentID)
	again := call[graph.AddChildOut](t, c, "add_child_task", map[string]any{"parent_id": test.TaskID, "child_id": sub.TaskID})
	require.False(t, again.Changed)

	info := call[graph.TaskInfo](t, c, "get_task", map[string]any{"task_id": test.TaskID})
	require.Equal(t, test.TaskID, info.ID)
	require.Equal(t, "test", info.Description)
	require.Equal(t, graph.Pending, info.Status)
	require.Equal(t, m.MissionID, info.MissionID)
	require.Equal(t, m.MissionID, info.ParentID)
	require.Equal(t, []string{sub.TaskID}, info.ChildIDs)
	require.Equal(t, []string{build.TaskID}, info.DependencyIDs)
	require.Empty(t, info.DependentIDs)
	require.Equal(t, "coder-2", info.AgentID)
	require.Equal(t, []string{key}, info.ArtifactKeys)
	require.NotEmpty(t, info.CreatedAt)

	subInfo := call[graph.TaskInfo](t, c, "get_task", map[string]any{"task_id": sub.TaskID})
	require.Equal(t, test.TaskID, subInfo.ParentID)
	require.Equal(t, m.MissionID, subInfo.MissionID, "the mission is found at any depth")
	buildInfo := call[graph.TaskInfo](t, c, "get_task", map[string]any{"task_id": build.TaskID})
	require.Equal(t, []string{test.TaskID}, buildInfo.DependentIDs)
	require.Empty(t, buildInfo.ChildIDs)

	mission := call[graph.MissionInfo](t, c, "get_mission", map[string]any{"mission_id": m.MissionID})
	require.Equal(t, "e2e mission", mission.Name)
	require.Equal(t, []string{build.TaskID, test.TaskID}, mission.TaskIDs)
	require.Equal(t, graph.StatusCounts{Pending: 2, Completed: 1}, mission.Counts)

	missions := call[graph.ListMissionsOut](t, c, "list_missions", map[string]any{})
	require.True(t, slices.ContainsFunc(missions.Missions, func(s graph.MissionSummary) bool { return s.ID == m.MissionID }))

	raw := mustJSON(t, info)
	require.NotContains(t, raw, "ToolwardenLock", "no Neo4j internals in outputs")
	require.NotRegexp(t, `\d+:[0-9a-f-]{36}:\d+`, raw, "no element IDs in outputs")
}

func TestGraphNotFoundNamesTheID(t *testing.T) {
	c := graphClient(t)
	m := call[graph.CreateMissionOut](t, c, "create_mission", map[string]any{"name": "not found checks", "description": ""})
	task := call[graph.CreateTaskOut](t, c, "create_task", map[string]any{"parent_id": m.MissionID, "description": "real"})
	ghost := uuid.NewString()
	cases := []struct {
		tool, arg string
		args      map[string]any
	}{
		{"get_task", "task_id", map[string]any{"task_id": ghost}},
		{"get_mission", "mission_id", map[string]any{"mission_id": ghost}},
		{"create_task", "parent_id", map[string]any{"parent_id": ghost, "description": "x"}},
		{"list_child_tasks", "parent_id", map[string]any{"parent_id": ghost}},
		{"update_task_status", "task_id", map[string]any{"task_id": ghost, "status": "Failed"}},
		{"check_task_dependencies", "task_id", map[string]any{"task_id": ghost}},
		{"add_child_task", "parent_id", map[string]any{"parent_id": ghost, "child_id": task.TaskID}},
		{"add_child_task", "child_id", map[string]any{"parent_id": task.TaskID, "child_id": ghost}},
		{"add_task_dependency", "task_id", map[string]any{"task_id": ghost, "depends_on_id": task.TaskID}},
		{"add_task_dependency", "depends_on_id", map[string]any{"task_id": task.TaskID, "depends_on_id": ghost}},
		{"assign_agent_to_task", "task_id", map[string]any{"task_id": ghost, "agent_id": "a"}},
		{"link_artifact_to_task", "task_id", map[string]any{"task_id": ghost, "artifact_key": "tasks/" + ghost + "/artifacts/a"}},
		{"add_child_task", "parent_id", map[string]any{"parent_id": m.MissionID, "child_id": task.TaskID}}, // a mission is no task
	}
	for _, tc := range cases {
		t.Run(tc.tool+"/"+tc.arg, func(t *testing.T) {
			e := errorOf(t, callTool(t, c, tc.tool, tc.args))
			require.Equal(t, toolerr.NotFound, e.Code, e.Message)
			require.True(t, strings.HasPrefix(e.Message, tc.arg+" "), "the message names the argument: %s", e.Message)
			require.NotEmpty(t, e.Hint)
		})
	}
	// Nothing was created along the way.
	info := call[graph.TaskInfo](t, c, "get_task", map[string]any{"task_id": task.TaskID})
	require.Empty(t, info.DependencyIDs)
	require.Empty(t, info.AgentID)
	require.Empty(t, info.ArtifactKeys)
}

// injections look like Cypher, or like our parameters, or are unusual text.
var injections = []string{
	`'})-[:X]->() DETACH DELETE n //`,
	`"})-[:X]->() DETACH DELETE n //`,
	"`Task`) DETACH DELETE n WITH 1 AS x MATCH (n) DETACH DELETE n //",
	"$description $id {id: $parent_id}",
	"MATCH (n) DETACH DELETE n",
	`\'; CALL db.clearQueryCaches() //`,
	"日本語のタスク — ünïcödé, emoji 👩‍💻, RTL שלום",
	"multi\nline\twith tab",
	strings.Repeat("x", graph.MaxDescription),
}

func TestGraphInjectionStoredLiterally(t *testing.T) {
	c := graphClient(t)
	d := bareDriver(t)
	sentinel := call[graph.CreateMissionOut](t, c, "create_mission", map[string]any{"name": "sentinel", "description": ""})
	call[graph.CreateTaskOut](t, c, "create_task", map[string]any{"parent_id": sentinel.MissionID, "description": "must survive"})
	m := call[graph.CreateMissionOut](t, c, "create_mission", map[string]any{"name": "hostile", "description": injections[0]})

	for i, payload := range injections {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			task := call[graph.CreateTaskOut](t, c, "create_task", map[string]any{"parent_id": m.MissionID, "description": payload})
			info := call[graph.TaskInfo](t, c, "get_task", map[string]any{"task_id": task.TaskID})
			require.Equal(t, payload, info.Description, "stored and returned byte for byte")
			if !strings.ContainsAny(payload, "\n\t") && len(payload) <= graph.MaxName {
				mm := call[graph.CreateMissionOut](t, c, "create_mission", map[string]any{"name": payload, "description": payload})
				require.Equal(t, payload, call[graph.MissionInfo](t, c, "get_mission", map[string]any{"mission_id": mm.MissionID}).Name)
			}
		})
	}

	mission := call[graph.MissionInfo](t, c, "get_mission", map[string]any{"mission_id": m.MissionID})
	require.Equal(t, len(injections), mission.Counts.Pending, "exactly one task per payload")
	require.Equal(t, injections[0], mission.Description)
	survivor := call[graph.MissionInfo](t, c, "get_mission", map[string]any{"mission_id": sentinel.MissionID})
	require.Len(t, survivor.TaskIDs, 1, "the rest of the graph is untouched")
	require.Zero(t, queryInt(t, d, "MATCH ()-[r:X]->() RETURN count(r)", nil), "no injected relationship exists")
}

func TestGraphHostileArgumentsRejected(t *testing.T) {
	c := graphClient(t)
	m := call[graph.CreateMissionOut](t, c, "create_mission", map[string]any{"name": "rejections", "description": ""})
	task := call[graph.CreateTaskOut](t, c, "create_task", map[string]any{"parent_id": m.MissionID, "description": "target"})
	id := task.TaskID
	cases := []struct {
		name string
		tool string
		args map[string]any
		code toolerr.Code
	}{
		{"injection as ID", "get_task", map[string]any{"task_id": injections[0]}, toolerr.InvalidUUID},
		{"upper-case UUID", "get_task", map[string]any{"task_id": strings.ToUpper(id)}, toolerr.InvalidUUID},
		{"braced UUID", "get_task", map[string]any{"task_id": "{" + id + "}"}, toolerr.InvalidUUID},
		{"urn UUID", "get_task", map[string]any{"task_id": "urn:uuid:" + id}, toolerr.InvalidUUID},
		{"32 hex digits", "get_task", map[string]any{"task_id": strings.ReplaceAll(id, "-", "")}, toolerr.InvalidUUID},
		{"nil UUID", "get_task", map[string]any{"task_id": uuid.Nil.String()}, toolerr.InvalidUUID},
		{"ID with a space", "get_task", map[string]any{"task_id": " " + id}, toolerr.InvalidUUID},
		{"injection as parent", "create_task", map[string]any{"parent_id": "x' OR 1=1 //", "description": "d"}, toolerr.InvalidUUID},
		{"status injection", "update_task_status", map[string]any{"task_id": id, "status": "Completed'}) DETACH DELETE t //"}, toolerr.InvalidSchema},
		{"status case", "update_task_status", map[string]any{"task_id": id, "status": "completed"}, toolerr.InvalidSchema},
		{"NUL in description", "create_task", map[string]any{"parent_id": id, "description": "a\x00b"}, toolerr.InvalidText},
		{"bidi override", "create_task", map[string]any{"parent_id": id, "description": "safe\u202eevil"}, toolerr.InvalidText},
		{"too long", "create_task", map[string]any{"parent_id": id, "description": strings.Repeat("é", graph.MaxDescription+1)}, toolerr.InvalidText},
		{"empty description", "create_task", map[string]any{"parent_id": id, "description": "  "}, toolerr.InvalidText},
		{"newline in name", "create_mission", map[string]any{"name": "a\nb", "description": ""}, toolerr.InvalidText},
		{"agent injection", "assign_agent_to_task", map[string]any{"task_id": id, "agent_id": "a'}) DETACH DELETE t //"}, toolerr.InvalidArgument},
		{"agent backtick", "assign_agent_to_task", map[string]any{"task_id": id, "agent_id": "`Agent`"}, toolerr.InvalidArgument},
		{"key of another task", "link_artifact_to_task", map[string]any{"task_id": id, "artifact_key": "tasks/" + uuid.NewString() + "/artifacts/a"}, toolerr.InvalidArgument},
		{"key traversal", "link_artifact_to_task", map[string]any{"task_id": id, "artifact_key": "tasks/" + id + "/artifacts/../../etc"}, toolerr.InvalidArgument},
		{"key injection", "link_artifact_to_task", map[string]any{"task_id": id, "artifact_key": "tasks/" + id + "/artifacts/a'}) DETACH DELETE n //"}, toolerr.InvalidArgument},
		{"unknown argument", "get_task", map[string]any{"task_id": id, "cypher": "MATCH (n) RETURN n"}, toolerr.InvalidSchema},
		{"self dependency", "add_task_dependency", map[string]any{"task_id": id, "depends_on_id": id}, toolerr.Cycle},
		{"self parent", "add_child_task", map[string]any{"parent_id": id, "child_id": id}, toolerr.Cycle},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := errorOf(t, callTool(t, c, tc.tool, tc.args))
			require.Equal(t, tc.code, e.Code, e.Message)
			require.NotEmpty(t, e.Hint)
		})
	}
	info := call[graph.TaskInfo](t, c, "get_task", map[string]any{"task_id": id})
	require.Equal(t, "target", info.Description)
	require.Equal(t, graph.Pending, info.Status)
	require.Empty(t, info.AgentID)
	require.Empty(t, info.ArtifactKeys)
	require.Empty(t, info.ChildIDs)
}

func TestGraphConcurrentStatusUpdates(t *testing.T) {
	c := graphClient(t)
	m := call[graph.CreateMissionOut](t, c, "create_mission", map[string]any{"name": "concurrency", "description": ""})
	task := call[graph.CreateTaskOut](t, c, "create_task", map[string]any{"parent_id": m.MissionID, "description": "contended"})
	statuses := []graph.Status{graph.InProgress, graph.Completed, graph.Failed, graph.Pending}
	const n = 50
	results := make([]graph.UpdateStatusOut, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			code, res, err := callCode(c, "update_task_status", map[string]any{"task_id": task.TaskID, "status": string(statuses[i%4])})
			if err == nil && code != "" {
				err = fmt.Errorf("update %d: %s %v", i, code, res.Content)
			}
			if err == nil {
				err = decodeStructured(res, &results[i])
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	final := call[graph.TaskInfo](t, c, "get_task", map[string]any{"task_id": task.TaskID}).Status
	// Serialised updates form one chain: every value written is read back as
	// "previous" by exactly the next update, except the last one, which is
	// the final value; the first update read the initial Pending.
	written := map[graph.Status]int{graph.Pending: 1} // the initial value
	read := map[graph.Status]int{final: 1}
	for _, r := range results {
		written[r.Status]++
		read[r.PreviousStatus]++
	}
	require.Equal(t, written, read, "each written value was read exactly once: no lost update")
}

func TestGraphCyclesRefused(t *testing.T) {
	c := graphClient(t)
	m := call[graph.CreateMissionOut](t, c, "create_mission", map[string]any{"name": "cycles", "description": ""})
	newTask := func(parent string) string {
		return call[graph.CreateTaskOut](t, c, "create_task", map[string]any{"parent_id": parent, "description": "t"}).TaskID
	}
	a, b, cc := newTask(m.MissionID), newTask(m.MissionID), newTask(m.MissionID)
	call[graph.AddDependencyOut](t, c, "add_task_dependency", map[string]any{"task_id": a, "depends_on_id": b})
	call[graph.AddDependencyOut](t, c, "add_task_dependency", map[string]any{"task_id": b, "depends_on_id": cc})
	e := errorOf(t, callTool(t, c, "add_task_dependency", map[string]any{"task_id": cc, "depends_on_id": a}))
	require.Equal(t, toolerr.Cycle, e.Code)
	require.Equal(t, "graph.acyclic", e.Rule)

	p := newTask(m.MissionID)
	q := newTask(p)
	r := newTask(q)
	e = errorOf(t, callTool(t, c, "add_child_task", map[string]any{"parent_id": r, "child_id": p}))
	require.Equal(t, toolerr.Cycle, e.Code, "a task cannot go under its own grandchild")
	require.Equal(t, q, call[graph.TaskInfo](t, c, "get_task", map[string]any{"task_id": r}).ParentID, "nothing moved")

	other := call[graph.CreateMissionOut](t, c, "create_mission", map[string]any{"name": "other", "description": ""})
	x := newTask(other.MissionID)
	e = errorOf(t, callTool(t, c, "add_child_task", map[string]any{"parent_id": x, "child_id": p}))
	require.Equal(t, toolerr.Conflict, e.Code, "tasks do not move between missions")
}

func TestGraphConcurrentCycleAttempts(t *testing.T) {
	c := graphClient(t)
	d := bareDriver(t)
	m := call[graph.CreateMissionOut](t, c, "create_mission", map[string]any{"name": "racing cycles", "description": ""})
	const pairs = 10
	ids := make([][2]string, pairs)
	for i := range ids {
		for j := range 2 {
			ids[i][j] = call[graph.CreateTaskOut](t, c, "create_task", map[string]any{"parent_id": m.MissionID, "description": "r"}).TaskID
		}
	}
	codes := make([][2]toolerr.Code, pairs)
	errs := make([]error, 2*pairs)
	var wg sync.WaitGroup
	for i := range pairs {
		for j := range 2 {
			wg.Go(func() {
				codes[i][j], _, errs[2*i+j] = callCode(c, "add_task_dependency",
					map[string]any{"task_id": ids[i][j], "depends_on_id": ids[i][1-j]})
			})
		}
	}
	wg.Wait()
	for i := range pairs {
		require.NoError(t, errs[2*i])
		require.NoError(t, errs[2*i+1])
		require.ElementsMatch(t, []toolerr.Code{"", toolerr.Cycle}, codes[i][:], "exactly one direction wins")
	}
	require.Zero(t, queryInt(t, d, `MATCH (m:Mission {id: $m})-[:HAS_TASK]->(t:Task)
		WHERE EXISTS { MATCH (t)-[:DEPENDS_ON*1..]->(t) } RETURN count(t)`, map[string]any{"m": m.MissionID}), "no cycle in the graph")
}

// decodeStructured is structured without a *testing.T, for goroutines.
func decodeStructured(res *mcp.CallToolResult, out any) error {
	tc, ok := res.Content[0].(mcp.TextContent)
	if !ok {
		return fmt.Errorf("no text content")
	}
	return json.Unmarshal([]byte(tc.Text), out)
}
