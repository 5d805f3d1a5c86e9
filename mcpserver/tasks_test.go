package mcpserver_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/mcpserver"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/fs"
)

// waitingTool is a tool of the exec toolset (which may run as a task)
// whose handler waits until its context ends, and says so on stopped.
func waitingTool(stopped chan<- struct{}) tools.Tool {
	return tools.Tool{
		Tool: mcp.NewToolWithRawSchema("run_waiting", "waits", json.RawMessage(`{"type":"object"}`)),
		Handler: func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			select {
			case stopped <- struct{}{}:
			default:
			}
			return nil, ctx.Err()
		},
		Meta: tools.Meta{Toolset: "exec", RunTimeout: func(map[string]any) (time.Duration, string) { return time.Hour, "test" }},
	}
}

// TestTasksOverStdio: over stdio, a tools/call with a task is answered at
// once with a working task while its handler runs; a second one past
// tasks.max_per_identity is refused naming the rule (and audited); a tool
// that does not run as a task is refused naming tasks.tools; tasks/list
// lists the task, tasks/cancel ends its handler's context and is
// audited; unknown or malformed task IDs find nothing.
// tasksOnStdio serves run_waiting (waitingTool) and read_file over
// stdio with the task bounds, initialized; it returns the connection,
// the channel run_waiting's ends are told on, and the audit file.
func tasksOnStdio(t *testing.T, bounds configs.Tasks) (*stdioConn, chan struct{}, string) {
	f := newFixture(t)
	ws, err := sandbox.Open(f.ws)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	stopped := make(chan struct{}, 1)
	set := []tools.Tool{waitingTool(stopped)}
	for _, tl := range fs.New(ws, f.cfg.FS).Tools() {
		if tl.Tool.Name == "read_file" {
			set = append(set, tl)
		}
	}
	f.cfg.Policy.Allow = []string{"read_file", "run_waiting"}
	log, err := audit.Open(f.auditPath)
	require.NoError(t, err)
	t.Cleanup(func() { log.Close() })
	g, err := mcpserver.NewGuard(f.cfg, set, log)
	require.NoError(t, err)
	s := mcpserver.New(g, set, "test", slog.New(slog.DiscardHandler))
	s.SetTaskBounds(bounds)
	c := serveStdioOn(t, s)

	c.roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c, stopped, f.auditPath
}

func TestTasksOverStdio(t *testing.T) {
	c, stopped, auditPath := tasksOnStdio(t, configs.Tasks{MaxPerIdentity: 1, MaxTotal: 4, MaxKeptPerIdentity: 16, TTL: time.Hour, PollInterval: time.Second})
	r := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_waiting","arguments":{},"task":{"ttl":60000}}}`)
	require.Nil(t, r.Error)
	var created mcp.CreateTaskResult
	require.NoError(t, json.Unmarshal(r.Result, &created), string(r.Result))
	require.Equal(t, mcp.TaskStatusWorking, created.Task.Status)
	require.Equal(t, int64(60000), *created.Task.TTL, "the client's shorter TTL is kept")
	id := created.Task.TaskId

	r = c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_waiting","arguments":{},"task":{}}}`)
	require.NotNil(t, r.Error, "past tasks.max_per_identity")
	require.Contains(t, r.Error.Message, "tasks.max_per_identity")
	r = c.roundTrip(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"hello.txt"},"task":{}}}`)
	require.NotNil(t, r.Error)
	require.Equal(t, mcp.METHOD_NOT_FOUND, r.Error.Code)
	require.Contains(t, r.Error.Message, "tasks.tools")
	r = c.roundTrip(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"hello.txt"},"task":null}}`)
	require.Nil(t, r.Error, "task: null is no task request")
	require.Contains(t, string(r.Result), "hello from toolwarden")

	r = c.roundTrip(`{"jsonrpc":"2.0","id":5,"method":"tasks/list"}`)
	var list mcp.ListTasksResult
	require.NoError(t, json.Unmarshal(r.Result, &list))
	require.Len(t, list.Tasks, 1)
	require.Equal(t, id, list.Tasks[0].TaskId)

	for name, params := range map[string]string{
		"unknown":  `{"taskId":"00000000-0000-0000-0000-000000000000"}`,
		"hostile":  `{"taskId":"../` + strings.Repeat("x", 4096) + `"}`,
		"wildcard": `{"taskId":"*"}`,
	} {
		r = c.roundTrip(`{"jsonrpc":"2.0","id":6,"method":"tasks/get","params":` + params + `}`)
		require.NotNil(t, r.Error, name)
		require.Contains(t, r.Error.Message, "task not found", name)
	}
	r = c.roundTrip(`{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{}}`)
	require.NotNil(t, r.Error)
	require.Equal(t, mcp.INVALID_PARAMS, r.Error.Code)

	r = c.roundTrip(`{"jsonrpc":"2.0","id":8,"method":"tasks/cancel","params":{"taskId":"` + id + `"}}`)
	require.Nil(t, r.Error)
	var cancelled mcp.CancelTaskResult
	require.NoError(t, json.Unmarshal(r.Result, &cancelled))
	require.Equal(t, mcp.TaskStatusCancelled, cancelled.Status)
	select {
	case <-stopped:
	case <-time.After(20 * time.Second):
		t.Fatal("the cancelled task's handler still runs")
	}
	r = c.roundTrip(`{"jsonrpc":"2.0","id":9,"method":"tasks/result","params":{"taskId":"` + id + `"}}`)
	require.NotNil(t, r.Error)
	require.Contains(t, r.Error.Message, "cancelled")

	// Its place is free again once the run has ended.
	require.Eventually(t, func() bool {
		r = c.roundTrip(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"run_waiting","arguments":{},"task":{}}}`)
		return r.Error == nil
	}, 20*time.Second, 50*time.Millisecond)

	raw, err := os.ReadFile(auditPath)
	require.NoError(t, err)
	text := string(raw)
	require.Contains(t, text, `"rule":"tasks.max_per_identity"`)
	require.Contains(t, text, `"rule":"tasks.cancel"`)
}

// TestTasksKeptPerIdentity: an identity keeps at most
// tasks.max_kept_per_identity tasks, running or ended; past it a new
// task is refused naming the rule, and audited.
func TestTasksKeptPerIdentity(t *testing.T) {
	c, _, auditPath := tasksOnStdio(t, configs.Tasks{MaxPerIdentity: 4, MaxTotal: 4, MaxKeptPerIdentity: 2, TTL: time.Hour, PollInterval: time.Second})
	var ids []string
	for i := range 2 {
		r := c.roundTrip(`{"jsonrpc":"2.0","id":` + itoa(i+1) + `,"method":"tools/call","params":{"name":"run_waiting","arguments":{},"task":{}}}`)
		require.Nil(t, r.Error)
		var created mcp.CreateTaskResult
		require.NoError(t, json.Unmarshal(r.Result, &created))
		ids = append(ids, created.Task.TaskId)
	}
	r := c.roundTrip(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_waiting","arguments":{},"task":{}}}`)
	require.NotNil(t, r.Error)
	require.Equal(t, mcp.INVALID_REQUEST, r.Error.Code)
	require.Contains(t, r.Error.Message, "tasks.max_kept_per_identity")
	for i, id := range ids {
		r = c.roundTrip(`{"jsonrpc":"2.0","id":` + itoa(10+i) + `,"method":"tasks/cancel","params":{"taskId":"` + id + `"}}`)
		require.Nil(t, r.Error)
	}
	// Cancelled tasks are kept too, until their TTL.
	r = c.roundTrip(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"run_waiting","arguments":{},"task":{}}}`)
	require.NotNil(t, r.Error)
	raw, err := os.ReadFile(auditPath)
	require.NoError(t, err)
	require.Equal(t, 2, strings.Count(string(raw), `"rule":"tasks.max_kept_per_identity"`))
}
