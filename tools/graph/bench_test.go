package graph_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/mcpserver"
	"github.com/toolwarden/toolwarden/tools/graph"
)

// The benchmarks compare a graph tool called through the whole of
// toolwarden (in-process MCP client, protocol, guard, audit, tool, driver)
// with the same query run on the bare driver in the same way: a session
// per call, a managed transaction, the database named. They report the
// median and the 99th percentile per call besides the mean.

type benchEnv struct {
	server *mcpserver.Built
	client *client.Client
	driver neo4j.DriverWithContext
	cfg    configs.Graph
	taskID string
}

func setup(b *testing.B) *benchEnv {
	testenv.Need(b, "TOOLWARDEN_GRAPH_URI")
	dir := b.TempDir()
	b.Chdir(dir)
	l, err := configs.Load(configs.Options{Allow: []string{"create_mission", "create_task", "get_task", "update_task_status"}})
	require.NoError(b, err)
	cfg := l.Config
	cfg.Audit.Path = filepath.Join(dir, "audit.jsonl")
	audit, err := audit.Open(cfg.Audit.Path)
	require.NoError(b, err)
	b.Cleanup(func() { audit.Close() })
	srv, err := mcpserver.Build(context.Background(), cfg, audit, "bench", slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(b, err)
	b.Cleanup(func() { srv.Close() })
	require.Empty(b, srv.Unavailable)
	c, err := client.NewInProcessClient(srv.MCP())
	require.NoError(b, err)
	require.NoError(b, c.Start(context.Background()))
	b.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	_, err = c.Initialize(context.Background(), init)
	require.NoError(b, err)

	driver, err := neo4j.NewDriverWithContext(cfg.Graph.URI, neo4j.BasicAuth(cfg.Graph.Username, os.Getenv(cfg.Graph.PasswordEnv), ""))
	require.NoError(b, err)
	b.Cleanup(func() { driver.Close(context.Background()) })

	e := &benchEnv{server: srv, client: c, driver: driver, cfg: cfg.Graph}
	var m graph.CreateMissionOut
	e.call(b, "create_mission", map[string]any{"name": "bench", "description": ""}, &m)
	var task graph.CreateTaskOut
	e.call(b, "create_task", map[string]any{"parent_id": m.MissionID, "description": "benchmarked"}, &task)
	e.taskID = task.TaskID
	return e
}

func (e *benchEnv) call(b *testing.B, tool string, args map[string]any, out any) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := e.client.CallTool(context.Background(), req)
	if err != nil || res.IsError {
		b.Fatalf("%s: %v %+v", tool, err, res)
	}
	if out != nil {
		require.NoError(b, json.Unmarshal([]byte(res.Content[0].(mcp.TextContent).Text), out))
	}
}

// bare runs cypher the way the tools do, on the bare driver.
func (e *benchEnv) bare(b *testing.B, mode neo4j.AccessMode, cypher string, params map[string]any) {
	ctx := context.Background()
	s := e.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: e.cfg.Database, AccessMode: mode})
	defer s.Close(ctx)
	work := func(tx neo4j.ManagedTransaction) (any, error) {
		res, err := tx.Run(ctx, cypher, params)
		if err != nil {
			return nil, err
		}
		return res.Collect(ctx)
	}
	var err error
	if mode == neo4j.AccessModeRead {
		_, err = s.ExecuteRead(ctx, work, neo4j.WithTxTimeout(e.cfg.QueryTimeout))
	} else {
		_, err = s.ExecuteWrite(ctx, work, neo4j.WithTxTimeout(e.cfg.QueryTimeout))
	}
	if err != nil {
		b.Fatal(err)
	}
}

// compare alternates a call through toolwarden with the same query on the
// bare driver, so that both see the same load, and reports each one's
// median and 99th percentile and the ratio of the medians.
func compare(b *testing.B, viaToolwarden, viaDriver func()) {
	var tw, dr []time.Duration
	for b.Loop() {
		start := time.Now()
		viaToolwarden()
		mid := time.Now()
		viaDriver()
		tw, dr = append(tw, mid.Sub(start)), append(dr, time.Since(mid))
	}
	p := func(d []time.Duration, q int) time.Duration {
		slices.Sort(d)
		return d[len(d)*q/100]
	}
	b.ReportMetric(float64(p(tw, 50).Microseconds()), "p50-toolwarden-µs")
	b.ReportMetric(float64(p(dr, 50).Microseconds()), "p50-driver-µs")
	b.ReportMetric(float64(p(tw, 99).Microseconds()), "p99-toolwarden-µs")
	b.ReportMetric(float64(p(dr, 99).Microseconds()), "p99-driver-µs")
	b.ReportMetric(float64(p(tw, 50))/float64(p(dr, 50)), "p50-ratio")
}

func BenchmarkGetTask(b *testing.B) {
	e := setup(b)
	args := map[string]any{"task_id": e.taskID}
	params := map[string]any{"id": e.taskID, "limit": e.cfg.MaxListResults}
	compare(b, func() { e.call(b, "get_task", args, nil) },
		func() { e.bare(b, neo4j.AccessModeRead, graph.GetTaskCypher, params) })
}

func BenchmarkUpdateTaskStatus(b *testing.B) {
	e := setup(b)
	args := map[string]any{"task_id": e.taskID, "status": "InProgress"}
	params := map[string]any{"id": e.taskID, "status": "InProgress"}
	compare(b, func() { e.call(b, "update_task_status", args, nil) },
		func() { e.bare(b, neo4j.AccessModeWrite, graph.UpdateStatusCypher, params) })
}

// BenchmarkGetTaskServerSide is BenchmarkGetTask without the MCP client:
// one JSON-RPC message into the server, its response out, against the bare
// driver. The difference from BenchmarkGetTask is the client's share.
func BenchmarkGetTaskServerSide(b *testing.B) {
	e := setup(b)
	ctx := context.Background()
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_task","arguments":{"task_id":"` + e.taskID + `"}}}`)
	params := map[string]any{"id": e.taskID, "limit": e.cfg.MaxListResults}
	compare(b, func() {
		out, err := json.Marshal(e.server.MCP().HandleMessage(ctx, msg))
		if err != nil || !strings.Contains(string(out), e.taskID) || strings.Contains(string(out), `"isError":true`) {
			b.Fatalf("bad response %.300s", out)
		}
	}, func() { e.bare(b, neo4j.AccessModeRead, graph.GetTaskCypher, params) })
}
