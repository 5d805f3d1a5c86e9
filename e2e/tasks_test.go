package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// taskWait is how long the approval test's task waits for the human with
// no client connected: the scenario is 10 minutes
// (TOOLWARDEN_TEST_TASK_WAIT=10m); the suite runs it shorter, as nothing
// in the design depends on it.
func taskWait(t *testing.T) time.Duration {
	if v := os.Getenv("TOOLWARDEN_TEST_TASK_WAIT"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err)
		return d
	}
	return 20 * time.Second
}

const (
	taskToken      = "e2e-token-0123456789"
	otherTaskToken = "ci-token-0123456789abcdef"
)

// taskClient connects over streamable HTTP with a bearer token (a new
// session each time), without elicitation: approvals wait on the page.
func taskClient(t *testing.T, base, token string) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(base+"/mcp",
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	require.NoError(t, err)
	return connectAs(t, client.NewClient(tr), legacyProtocol)
}

var taskRequestID atomic.Int64

// startTask sends a tools/call with a task request and returns the task
// it created, or the JSON-RPC error.
func startTask(t *testing.T, c *client.Client, tool string, args map[string]any) (mcp.Task, *mcp.JSONRPCErrorDetails) {
	t.Helper()
	res, err := c.GetTransport().SendRequest(ctxT(t), transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION,
		ID: mcp.NewRequestId(taskRequestID.Add(1)), Method: string(mcp.MethodToolsCall),
		Params: map[string]any{"name": tool, "arguments": args, "task": map[string]any{"ttl": 3600000}}})
	require.NoError(t, err)
	if res.Error != nil {
		return mcp.Task{}, res.Error
	}
	var created mcp.CreateTaskResult
	require.NoError(t, json.Unmarshal(res.Result, &created), string(res.Result))
	require.NotEmpty(t, created.Task.TaskId, string(res.Result))
	return created.Task, nil
}

func getTask(ctx context.Context, c *client.Client, id string) (*mcp.GetTaskResult, error) {
	return c.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: id}})
}

// waitTask polls the task until it ends.
func waitTask(t *testing.T, c *client.Client, id string) mcp.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := c.WaitForTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: id}}, 200*time.Millisecond)
	require.NoError(t, err)
	return res.Task
}

func taskResult(t *testing.T, c *client.Client, id string) *mcp.TaskResultResult {
	t.Helper()
	res, err := c.TaskResult(ctxT(t), mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: id}})
	require.NoError(t, err)
	return res
}

// taskServer starts `serve --http` with the approval page as the only
// channel, a second identity (ci), and yaml added to the config.
func taskServer(t *testing.T, yaml string, args ...string) (pid int, ws, base, pageURL string, env []string) {
	t.Helper()
	ws, env = workspace(t)
	cfg := filepath.Join(t.TempDir(), "toolwarden.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("approval:\n  channel: [page]\n  timeout: 1h\n"+
		"http:\n  identities: [{name: ci, token_env: TW_TEST_CI_TOKEN}]\n"+yaml), 0o644))
	env = append(env, "TW_TEST_CI_TOKEN="+otherTaskToken)
	pid, base, pageURL = startPageHTTP(t, ws, env, append([]string{"--config", cfg}, args...)...)
	return pid, ws, base, pageURL, env
}

// TestTaskWaitsForPageApprovalAcrossReconnect is the scenario
// against the built binary: a write_file call started as a task waits for
// the human on the approval page while no client is connected (taskWait);
// the client comes back on a new session with the same token, sees the
// task still working, the human approves on the page, and the client
// fetches the result. Another identity sees nothing of the task, cannot
// cancel it, and lists no task.
func TestTaskWaitsForPageApprovalAcrossReconnect(t *testing.T) {
	t.Parallel()
	_, ws, base, pageURL, env := taskServer(t, "")
	first := taskClient(t, base, taskToken)
	require.NotNil(t, first.GetServerCapabilities().Tasks, "the server declares tasks")
	task, rpcErr := startTask(t, first, "write_file", map[string]any{"path": "notes/approved.txt", "content": "approved later\n", "create_dirs": true})
	require.Nil(t, rpcErr)
	require.Equal(t, mcp.TaskStatusWorking, task.Status)
	require.NoError(t, first.Close(), "the client disconnects; the task waits on")

	hc, pageBase := pageSession(t, pageURL)
	require.Eventually(t, func() bool { return len(pageIDs(t, hc, pageBase)) == 1 }, 30*time.Second, 50*time.Millisecond,
		"the call waits on the page")
	time.Sleep(taskWait(t))

	again := taskClient(t, base, taskToken)
	got, err := getTask(ctxT(t), again, task.TaskId)
	require.NoError(t, err)
	require.Equal(t, mcp.TaskStatusWorking, got.Status, "still waiting for the human after %s", taskWait(t))
	list, err := again.ListTasks(ctxT(t), mcp.ListTasksRequest{})
	require.NoError(t, err)
	require.Len(t, list.Tasks, 1)
	require.Equal(t, task.TaskId, list.Tasks[0].TaskId)

	other := taskClient(t, base, otherTaskToken)
	_, err = getTask(ctxT(t), other, task.TaskId)
	require.ErrorContains(t, err, "task not found", "another identity's tasks/get is refused")
	_, err = other.CancelTask(ctxT(t), mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: task.TaskId}})
	require.ErrorContains(t, err, "task not found", "another identity cannot cancel it")
	_, err = other.TaskResult(ctxT(t), mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: task.TaskId}})
	require.ErrorContains(t, err, "task not found")
	otherList, err := other.ListTasks(ctxT(t), mcp.ListTasksRequest{})
	require.NoError(t, err)
	require.Empty(t, otherList.Tasks, "another identity lists nothing")

	form := pageForm(t, hc, pageBase)
	form.Set("action", "approve")
	require.Equal(t, 303, postDecision(t, hc, pageBase, originOf(pageURL), form))

	ended := waitTask(t, again, task.TaskId)
	require.Equal(t, mcp.TaskStatusCompleted, ended.Status, ended.StatusMessage)
	res := taskResult(t, again, task.TaskId)
	require.False(t, res.IsError, "%+v", res.Content)
	written, err := os.ReadFile(filepath.Join(ws, "notes", "approved.txt"))
	require.NoError(t, err)
	require.Equal(t, "approved later\n", string(written))
	audit := auditText(t, auditPathOf(t, env))
	require.Contains(t, audit, `"outcome":"approved"`, "the approval is audited as for any call")
	observe(t, mcpGo, mcpGoVersion(), tasksColumn, "✓ streamable HTTP: a task waits for the page approval with no client connected, "+
		"is fetched on a new session, result read; another identity sees nothing; `tasks/cancel` stops a run_script sandbox; "+
		"any replica serves it (Redis)")
}

// TestTaskDeniedToolIsDenied: a task runs its call through the same
// guard as any call: a tool the policy denies is denied as a task too,
// and audited; a tool that cannot run as a task is refused naming the
// rule; another identity cannot read the result.
func TestTaskDeniedToolIsDenied(t *testing.T) {
	t.Parallel()
	_, ws, base, _, env := taskServer(t, "policy:\n  deny: [write_file]\n")
	c := taskClient(t, base, taskToken)
	task, rpcErr := startTask(t, c, "write_file", map[string]any{"path": "denied.txt", "content": "no\n"})
	require.Nil(t, rpcErr)
	require.Equal(t, mcp.TaskStatusCompleted, waitTask(t, c, task.TaskId).Status)
	res := taskResult(t, c, task.TaskId)
	require.True(t, res.IsError)
	require.Equal(t, toolerr.DeniedNotAllowed, toolerr.ErrorCode(&mcp.CallToolResult{Content: res.Content, IsError: res.IsError}))
	require.NoFileExists(t, filepath.Join(ws, "denied.txt"))
	require.Contains(t, auditText(t, auditPathOf(t, env)), `"tool":"write_file"`)

	_, rpcErr = startTask(t, c, "read_file", map[string]any{"path": "hello.txt"})
	require.NotNil(t, rpcErr, "read_file does not run as a task")
	require.Equal(t, mcp.METHOD_NOT_FOUND, rpcErr.Code)
	require.Contains(t, rpcErr.Message, "tasks.tools")

	_, err := getTask(ctxT(t), taskClient(t, base, otherTaskToken), task.TaskId)
	require.ErrorContains(t, err, "task not found")
}

// TestTaskCancelKillsSandbox: cancelling a task whose run_script is
// running stops its sandbox (no sandbox process is left below the
// server), ends the task cancelled, and writes an audit line.
func TestTaskCancelKillsSandbox(t *testing.T) {
	testenv.Root(t) // the sandbox
	t.Parallel()
	// No sandbox booted ahead: the only one is the run's.
	pid, _, base, _, env := taskServer(t, "exec:\n  warm_pool: 0\n",
		"--allow", "run_script", "--approval", "run_script=allow")
	c := taskClient(t, base, taskToken)
	task, rpcErr := startTask(t, c, "run_script", map[string]any{"interpreter": "bash", "script": "exec sleep 300", "timeout_seconds": 60})
	require.Nil(t, rpcErr)
	// The sandbox is up for a second: the run is under way.
	var upSince time.Time
	running := func() bool {
		if len(sandboxDescendants(t, pid)) == 0 {
			upSince = time.Time{}
		} else if upSince.IsZero() {
			upSince = time.Now()
		}
		return !upSince.IsZero() && time.Since(upSince) > time.Second
	}
	for deadline := time.Now().Add(90 * time.Second); !running(); time.Sleep(100 * time.Millisecond) {
		got, err := getTask(ctxT(t), c, task.TaskId)
		require.NoError(t, err)
		if got.Status != mcp.TaskStatusWorking {
			t.Fatalf("the run ended: %+v", taskResult(t, c, task.TaskId).Content)
		}
		require.True(t, time.Now().Before(deadline), "the sandbox starts")
	}
	cancelled, err := c.CancelTask(ctxT(t), mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: task.TaskId}})
	require.NoError(t, err)
	require.Equal(t, mcp.TaskStatusCancelled, cancelled.Status)
	require.Eventually(t, func() bool { return len(sandboxDescendants(t, pid)) == 0 }, 60*time.Second, 100*time.Millisecond,
		"no sandbox process is left")
	got, err := getTask(ctxT(t), c, task.TaskId)
	require.NoError(t, err)
	require.Equal(t, mcp.TaskStatusCancelled, got.Status)
	_, err = c.CancelTask(ctxT(t), mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: task.TaskId}})
	require.ErrorContains(t, err, "already ended")
	audit := auditText(t, auditPathOf(t, env))
	require.Contains(t, audit, `"rule":"tasks.cancel"`)
	require.Equal(t, 1, strings.Count(audit, `"rule":"tasks.cancel"`))
}

// TestTasksAcrossReplicas: with cluster.redis_url, a task created on
// replica a (a write_file waiting for the human on the terminal channel)
// is seen working on b, approved with b's `toolwarden approvals`, and its
// result fetched on c; a second task started on a is cancelled from b,
// which stops it on a (its approval no longer waits anywhere).
func TestTasksAcrossReplicas(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, "toolwarden"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, "toolwarden", "config.yaml"), []byte("approval:\n  channel: [terminal]\n"), 0o644))
	f := startFleet(t, true, "XDG_CONFIG_HOME="+home)
	on := func(name string) *client.Client {
		return taskClient(t, "http://"+f.replicas[name].addr, replicaToken)
	}
	a, b, c := on("a"), on("b"), on("c")
	task, rpcErr := startTask(t, a, "write_file", map[string]any{"path": "notes/task-a.md", "content": "created on a", "create_dirs": true})
	require.Nil(t, rpcErr)
	id := waitingID(t, f.cliEnv("b"))
	seen, err := getTask(ctxT(t), b, task.TaskId)
	require.NoError(t, err)
	require.Equal(t, mcp.TaskStatusWorking, seen.Status, "b sees the task a runs")
	out, err := approvalsCLI(t, f.cliEnv("b"), "approve", id)
	require.NoError(t, err, out)
	require.Equal(t, mcp.TaskStatusCompleted, waitTask(t, c, task.TaskId).Status)
	res := taskResult(t, c, task.TaskId)
	require.False(t, res.IsError, "%+v", res.Content)
	require.FileExists(t, filepath.Join(f.ws, "notes/task-a.md"))

	second, rpcErr := startTask(t, a, "write_file", map[string]any{"path": "notes/task-cancelled.md", "content": "never", "create_dirs": true})
	require.Nil(t, rpcErr)
	waitingID(t, f.cliEnv("c"))
	cancelled, err := b.CancelTask(ctxT(t), mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: second.TaskId}})
	require.NoError(t, err)
	require.Equal(t, mcp.TaskStatusCancelled, cancelled.Status)
	require.Eventually(t, func() bool {
		out, err := approvalsCLI(t, f.cliEnv("a"), "list", "--json")
		return err == nil && strings.TrimSpace(out) == "[]"
	}, 30*time.Second, 100*time.Millisecond, "the call stopped on a: nothing waits")
	got, err := getTask(ctxT(t), a, second.TaskId)
	require.NoError(t, err)
	require.Equal(t, mcp.TaskStatusCancelled, got.Status)
	require.NoFileExists(t, filepath.Join(f.ws, "notes/task-cancelled.md"))
	list, err := c.ListTasks(ctxT(t), mcp.ListTasksRequest{})
	require.NoError(t, err)
	require.Len(t, list.Tasks, 2, "every replica lists the identity's tasks")
}

// tsTasks runs one step of scripts/clients/tstasks/tasks.cjs (the
// TypeScript SDK's task client) and decodes what it prints.
func tsTasks(t *testing.T, prefix, base, token string, args ...string) map[string]any {
	t.Helper()
	script, err := filepath.Abs("../scripts/clients/tstasks/tasks.cjs")
	require.NoError(t, err)
	cmd := exec.CommandContext(ctxT(t), needNode(t), append([]string{script, prefix, base + "/mcp", token}, args...)...)
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	var res map[string]any
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	return res
}

// TestTaskTypeScriptSDK: the official TypeScript SDK's task client
// starts a write_file as a task and disconnects; the task waits for the
// human on the approval page (taskWait); the client comes back, sees it
// working, the human approves, and the client waits for it and reads its
// result. Another identity's tasks/get is refused.
func TestTaskTypeScriptSDK(t *testing.T) {
	prefix := testenv.Need(t, "TOOLWARDEN_TEST_TS_SDK")[0] // scripts/test sets it up
	t.Parallel()
	_, ws, base, pageURL, _ := taskServer(t, "")
	started := tsTasks(t, prefix, base, taskToken, "start", "write_file",
		`{"path":"notes/ts-task.txt","content":"from the TypeScript SDK\n","create_dirs":true}`)
	require.Equal(t, "working", started["status"], "%v", started)
	id, _ := started["taskId"].(string)
	require.NotEmpty(t, id)

	hc, pageBase := pageSession(t, pageURL)
	require.Eventually(t, func() bool { return len(pageIDs(t, hc, pageBase)) == 1 }, 30*time.Second, 50*time.Millisecond)
	time.Sleep(taskWait(t))
	require.Equal(t, map[string]any{"status": "working"}, tsTasks(t, prefix, base, taskToken, "get", id))
	require.Equal(t, map[string]any{"tasks": []any{id}}, tsTasks(t, prefix, base, taskToken, "list"))
	other := tsTasks(t, prefix, base, otherTaskToken, "get", id)
	require.Contains(t, other["error"], "task not found", "another identity's tasks/get is refused")

	form := pageForm(t, hc, pageBase)
	form.Set("action", "approve")
	require.Equal(t, 303, postDecision(t, hc, pageBase, originOf(pageURL), form))
	done := tsTasks(t, prefix, base, taskToken, "wait", id)
	require.Equal(t, "completed", done["status"], "%v", done)
	require.Equal(t, false, done["isError"], "%v", done)
	written, err := os.ReadFile(filepath.Join(ws, "notes", "ts-task.txt"))
	require.NoError(t, err)
	require.Equal(t, "from the TypeScript SDK\n", string(written))
	observe(t, "TypeScript SDK (`@modelcontextprotocol/sdk`)", tsSDKVersion, tasksColumn,
		"✓ `client.experimental.tasks` (streamable HTTP): `callToolStream` creates a task that waits for the page approval "+
			"while disconnected; `getTask`, `listTasks`, `getTaskResult` on a new session; another identity's `getTask` refused")
}
