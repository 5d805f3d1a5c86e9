package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools/declared"
	"github.com/toolwarden/toolwarden/tools/upstream"
)

// MCP tasks (SEP-2663): a tools/call that carries a task request is
// answered at once with a task; the call runs on in this process and its
// status and result are fetched later with tasks/get and tasks/result,
// listed with tasks/list and stopped with tasks/cancel, by the identity
// that started it and nobody else, from any connection (and, with
// cluster.redis_url, any replica).
//
// The call itself is served by mcp-go's MCPServer.HandleMessage, the
// entry point of every tools/call: the same guard (policy, approval,
// limits, deadline, output filter, audit) decides and records it. The
// task is only how the answer travels. A task waiting for a human holds
// no connection: one goroutine, a place in the bounded table below (and
// one among approval.max_pending).
//
// The transports hand the task requests here (Tasks.Answer) before
// mcp-go's own task handlers, which keep tasks per session in memory.

// taskRecord is a task as stored.
type taskRecord struct {
	Task     mcp.Task        `json:"task"`
	Identity string          `json:"identity"`
	Tool     string          `json:"tool"`
	Replica  string          `json:"replica,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Error    *rpcError       `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// taskStore keeps the records: in memory (memTasks) or in Redis
// (clusterstate.Tasks).
type taskStore interface {
	Create(id, identity string, rec []byte, ttl time.Duration) error
	Update(id string, rec []byte) error
	Get(id string) ([]byte, error)
	List(identity string) ([][]byte, error)
	Count(identity string) (int, error)
}

// tasks is the table of the tasks running here and the store of all.
type tasks struct {
	srv     *Server
	store   taskStore
	shared  bool // the store is the fleet's: watch it for cancels
	cfg     configs.Tasks
	replica string
	log     *slog.Logger

	mu          sync.Mutex
	running     map[string]*runningTask
	perIdentity map[string]int
	watching    bool
}

type runningTask struct {
	identity string
	cancel   context.CancelFunc
	// ended is set, under tasks.mu, once the call has returned and its
	// end is being stored: a cancel then finds the task ended.
	ended bool
}

// defaultTasks applies until Build sets the configured bounds; it is
// configs/default.yaml's.
var defaultTasks = configs.Tasks{MaxPerIdentity: 16, MaxTotal: 256, MaxKeptPerIdentity: 1024, TTL: time.Hour, PollInterval: 2 * time.Second}

func newTasks(s *Server) *tasks {
	return &tasks{srv: s, store: newMemTasks(), cfg: defaultTasks, log: s.log,
		running: map[string]*runningTask{}, perIdentity: map[string]int{}}
}

// taskMethods are the requests Answer serves besides tools/call.
var taskMethods = []string{string(mcp.MethodTasksGet), string(mcp.MethodTasksResult), string(mcp.MethodTasksList), string(mcp.MethodTasksCancel)}

// Claims reports whether the request (its method and params) is a task
// request Answer serves: a tasks/* request, or a tools/call with a task.
func (t *tasks) Claims(method string, params []byte) bool {
	if method == string(mcp.MethodToolsCall) {
		if !bytes.Contains(params, []byte(`"task"`)) {
			return false
		}
		var p struct {
			Task json.RawMessage `json:"task"`
		}
		return json.Unmarshal(params, &p) == nil && len(p.Task) > 0 && string(p.Task) != "null"
	}
	return slices.Contains(taskMethods, method)
}

// Answer serves one task request and returns the JSON-RPC answer. ctx is
// the request's: its identity owns what it starts and sees.
func (t *tasks) Answer(ctx context.Context, msg []byte) []byte {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(msg, &req); err != nil {
		return answerError(nil, mcp.PARSE_ERROR, "the request is not JSON")
	}
	var p struct {
		TaskID string `json:"taskId"`
	}
	if req.Method != string(mcp.MethodTasksList) && req.Method != string(mcp.MethodToolsCall) {
		if err := json.Unmarshal(req.Params, &p); err != nil || p.TaskID == "" {
			return answerError(req.ID, mcp.INVALID_PARAMS, "params.taskId is required")
		}
	}
	identity := identityOf(ctx)
	var res any
	var e *rpcError
	switch req.Method {
	case string(mcp.MethodToolsCall):
		res, e = t.start(ctx, req.ID, req.Params)
	case string(mcp.MethodTasksGet):
		res, e = t.get(identity, p.TaskID)
	case string(mcp.MethodTasksResult):
		return t.result(ctx, req.ID, identity, p.TaskID)
	case string(mcp.MethodTasksList):
		res, e = t.list(identity)
	case string(mcp.MethodTasksCancel):
		res, e = t.cancel(ctx, identity, p.TaskID)
	}
	if e != nil {
		return answerError(req.ID, e.Code, e.Message)
	}
	return answerResult(req.ID, res)
}

// taskCapable reports whether a tool may run as a task: the tools that
// may take long (the exec sandbox, declared commands, upstream servers)
// and any that waits for a human's approval.
func (s *Server) taskCapable(name string) bool {
	if s.pins.digest(name) != "" {
		return true // an upstream's tool, listed at start or later
	}
	for _, tl := range s.tools {
		if tl.Tool.Name != name {
			continue
		}
		switch tl.Meta.Toolset {
		case "exec", declared.Toolset, upstream.Toolset:
			return true
		}
		mode, _, _ := s.guard.ApprovalOf(name)
		return mode == guard.ApprovalElicit
	}
	return false
}

// start admits a tools/call with a task and starts it.
func (t *tasks) start(ctx context.Context, id json.RawMessage, params json.RawMessage) (any, *rpcError) {
	var p struct {
		Name string          `json:"name"`
		Task *mcp.TaskParams `json:"task"`
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || json.Unmarshal(params, &fields) != nil || p.Name == "" {
		return nil, &rpcError{mcp.INVALID_PARAMS, "tools/call needs params with a tool name"}
	}
	if !t.srv.taskCapable(p.Name) {
		return nil, &rpcError{mcp.METHOD_NOT_FOUND, fmt.Sprintf(
			"tool %q does not run as a task (rule tasks.tools): only run_script, run_command, declared and upstream tools and tools that wait for approval do; call it without params.task", p.Name)}
	}
	identity := identityOf(ctx)
	call := guard.Call{Tool: p.Name, Identity: identity, Session: sessionID(ctx)}
	if e := t.reserve(identity); e != nil {
		t.srv.guard.Reject(call, e)
		return nil, &rpcError{mcp.INVALID_REQUEST, e.Error() + " (" + e.Rule + "). " + e.Hint}
	}
	if e := t.keepable(identity); e != nil {
		t.release(identity, "")
		t.srv.guard.Reject(call, e)
		return nil, &rpcError{mcp.INVALID_REQUEST, e.Error() + " (" + e.Rule + "). " + e.Hint}
	}
	ttl := t.cfg.TTL
	if p.Task != nil && p.Task.TTL != nil && *p.Task.TTL > 0 && time.Duration(*p.Task.TTL)*time.Millisecond < ttl {
		ttl = time.Duration(*p.Task.TTL) * time.Millisecond
	}
	taskID := uuid.NewString()
	rec := taskRecord{Identity: identity, Tool: p.Name, Replica: t.replica,
		Task: mcp.NewTask(taskID, mcp.WithTaskTTL(ttl.Milliseconds()), mcp.WithTaskPollInterval(t.cfg.PollInterval.Milliseconds()))}
	b, _ := json.Marshal(rec)
	if err := t.store.Create(taskID, identity, b, ttl); err != nil {
		t.release(identity, "")
		t.log.Warn("tasks: the task store cannot be reached", "err", err)
		return nil, &rpcError{mcp.INTERNAL_ERROR, "the task store (cluster.redis_url) cannot be reached; the call was not started"}
	}
	// The very call, without its task request, as its own request to the
	// server: the guard sees what it sees of any call.
	delete(fields, "task")
	inner, _ := json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": "task-" + taskID,
		"method": mcp.MethodToolsCall, "params": fields})
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	t.mu.Lock()
	t.running[taskID] = &runningTask{identity: identity, cancel: cancel}
	t.watch()
	t.mu.Unlock()
	go t.run(runCtx, cancel, taskID, identity, inner)
	return mcp.CreateTaskResult{Task: rec.Task}, nil
}

// reserve takes a place for identity's new task, or names the cap it
// reached.
func (t *tasks) reserve(identity string) *toolerr.Error {
	t.mu.Lock()
	defer t.mu.Unlock()
	limit, whose, rule := t.cfg.MaxPerIdentity, "of this identity", "tasks.max_per_identity"
	n := t.perIdentity[identity]
	if t.total() >= t.cfg.MaxTotal {
		limit, whose, rule, n = t.cfg.MaxTotal, "of all identities", "tasks.max_total", t.total()
	}
	if n >= limit {
		return toolerr.New(toolerr.LimitExceeded,
			"Wait for your running tasks to end (or cancel some with tasks/cancel) before starting more.",
			"%d tasks %s already run, the most %s allows", n, whose, rule).WithRule(rule)
	}
	t.perIdentity[identity]++
	return nil
}

// keepable refuses a new task of identity when it keeps
// tasks.max_kept_per_identity already (or the store cannot say).
func (t *tasks) keepable(identity string) *toolerr.Error {
	n, err := t.store.Count(identity)
	if err != nil {
		return toolerr.New(toolerr.BackendUnavailable, "Try again later.",
			"the task store (cluster.redis_url) cannot be reached: %v", err).WithRule("tasks.store")
	}
	if n >= t.cfg.MaxKeptPerIdentity {
		return toolerr.New(toolerr.LimitExceeded,
			"Fetch the results you need; ended tasks are dropped after tasks.ttl, and new ones are accepted again.",
			"this identity keeps %d tasks, the most tasks.max_kept_per_identity allows", n).WithRule("tasks.max_kept_per_identity")
	}
	return nil
}

// total counts the places taken; t.mu is held.
func (t *tasks) total() int {
	n := 0
	for _, c := range t.perIdentity {
		n += c
	}
	return n
}

// release gives back identity's place and forgets the running task id.
func (t *tasks) release(identity, id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.perIdentity[identity]--; t.perIdentity[identity] <= 0 {
		delete(t.perIdentity, identity)
	}
	delete(t.running, id)
}

// run serves the call and stores how it ended, unless the task was
// cancelled (or expired) meanwhile.
func (t *tasks) run(ctx context.Context, cancel context.CancelFunc, id, identity string, inner []byte) {
	defer cancel()
	defer t.release(identity, id)
	msg := t.srv.mcp.HandleMessage(ctx, inner)
	t.mu.Lock()
	cancelled := ctx.Err() != nil
	if r := t.running[id]; r != nil && !cancelled {
		r.ended = true
	}
	t.mu.Unlock()
	if cancelled {
		return // tasks/cancel stores how it ended
	}
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if b, err := json.Marshal(msg); err != nil || json.Unmarshal(b, &out) != nil {
		out.Error = &rpcError{mcp.INTERNAL_ERROR, "the call's answer could not be encoded"}
	}
	rec, err := t.load(id)
	if err != nil || rec == nil || rec.Task.Status.IsTerminal() {
		return // cancelled, expired, or the store is gone: nothing to keep
	}
	rec.Task.Status, rec.Result, rec.Error = mcp.TaskStatusCompleted, out.Result, out.Error
	switch {
	case out.Error != nil:
		rec.Task.Status, rec.Task.StatusMessage = mcp.TaskStatusFailed, out.Error.Message
	case isErrorResult(out.Result):
		rec.Task.StatusMessage = "the tool call ended with an error result (isError); tasks/result has it"
	}
	if err := t.save(rec); err != nil {
		t.log.Warn("tasks: a task's result could not be stored", "task", id, "err", err)
	}
}

func isErrorResult(res json.RawMessage) bool {
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(res, &r) == nil && r.IsError
}

// load reads a task's record; nil when there is none.
func (t *tasks) load(id string) (*taskRecord, error) {
	b, err := t.store.Get(id)
	if err != nil || b == nil {
		return nil, err
	}
	var rec taskRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

// save stores rec, stamped now.
func (t *tasks) save(rec *taskRecord) error {
	rec.Task.LastUpdatedAt = time.Now().UTC().Format(time.RFC3339)
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return t.store.Update(rec.Task.TaskId, b)
}

// owned returns identity's task id; another identity's is as unknown as
// one that never was.
func (t *tasks) owned(identity, id string) (*taskRecord, *rpcError) {
	rec, err := t.load(id)
	if err != nil {
		return nil, &rpcError{mcp.INTERNAL_ERROR, "the task store (cluster.redis_url) cannot be reached"}
	}
	if rec == nil || rec.Identity != identity {
		return nil, &rpcError{mcp.INVALID_PARAMS, "task not found (it never was, it expired after tasks.ttl, or another identity started it)"}
	}
	return rec, nil
}

func (t *tasks) get(identity, id string) (any, *rpcError) {
	rec, e := t.owned(identity, id)
	if e != nil {
		return nil, e
	}
	return mcp.GetTaskResult{Task: rec.Task}, nil
}

func (t *tasks) list(identity string) (any, *rpcError) {
	recs, err := t.store.List(identity)
	if err != nil {
		return nil, &rpcError{mcp.INTERNAL_ERROR, "the task store (cluster.redis_url) cannot be reached"}
	}
	out := mcp.ListTasksResult{Tasks: []mcp.Task{}}
	for _, b := range recs {
		var rec taskRecord
		if json.Unmarshal(b, &rec) == nil && rec.Identity == identity {
			out.Tasks = append(out.Tasks, rec.Task)
		}
	}
	return out, nil
}

// result waits for the task to end, as long as the client waits, and
// returns its result: the call's own answer, tied to the task.
func (t *tasks) result(ctx context.Context, reqID json.RawMessage, identity, id string) []byte {
	for {
		rec, e := t.owned(identity, id)
		if e != nil {
			return answerError(reqID, e.Code, e.Message)
		}
		if rec.Task.Status.IsTerminal() {
			return t.ended(reqID, rec)
		}
		select {
		case <-ctx.Done():
			return answerError(reqID, mcp.REQUEST_INTERRUPTED, "the client stopped waiting; the task runs on")
		case <-time.After(resultPoll):
		}
	}
}

// resultPoll is how often tasks/result looks at a task that has not
// ended.
var resultPoll = 500 * time.Millisecond

// ended is the answer to tasks/result for an ended task.
func (t *tasks) ended(reqID json.RawMessage, rec *taskRecord) []byte {
	switch {
	case rec.Error != nil:
		return answerError(reqID, rec.Error.Code, rec.Error.Message)
	case rec.Task.Status == mcp.TaskStatusCancelled || rec.Result == nil:
		return answerError(reqID, mcp.INVALID_PARAMS, "task "+rec.Task.TaskId+" was cancelled: it has no result")
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal(rec.Result, &res); err != nil {
		return answerError(reqID, mcp.INTERNAL_ERROR, "the task's stored result is not an object")
	}
	meta := map[string]any{}
	if m, ok := res["_meta"]; ok {
		_ = json.Unmarshal(m, &meta)
	}
	meta[mcp.RelatedTaskMetaKey] = mcp.RelatedTaskMeta(rec.Task.TaskId)
	res["_meta"], _ = json.Marshal(meta)
	return answerResult(reqID, res)
}

// cancel stops identity's task: its record says cancelled at once, the
// call's context ends here or (watch) on the replica that runs it, which
// stops its sandbox, and the audit log has a line for it.
func (t *tasks) cancel(ctx context.Context, identity, id string) (any, *rpcError) {
	rec, e := t.owned(identity, id)
	if e != nil {
		return nil, e
	}
	if rec.Task.Status.IsTerminal() {
		return nil, &rpcError{mcp.INVALID_PARAMS, fmt.Sprintf("task %s already ended (%s): it cannot be cancelled", id, rec.Task.Status)}
	}
	if !t.stop(id) {
		return nil, &rpcError{mcp.INVALID_PARAMS, fmt.Sprintf("task %s already ended: it cannot be cancelled", id)}
	}
	rec.Task.Status, rec.Task.StatusMessage = mcp.TaskStatusCancelled, "cancelled by its owner (tasks/cancel)"
	if err := t.save(rec); err != nil {
		return nil, &rpcError{mcp.INTERNAL_ERROR, "the task store (cluster.redis_url) cannot be reached; the call was stopped but its task not marked cancelled"}
	}
	t.srv.guard.Reject(guard.Call{Tool: rec.Tool, Identity: identity, Session: sessionID(ctx)},
		toolerr.New(toolerr.Canceled, "", "task %s cancelled by its owner", id).WithRule("tasks.cancel"))
	return mcp.CancelTaskResult{Task: rec.Task}, nil
}

// stop ends the context of task id if it runs here, and reports false
// when its call has returned already (its end is being stored).
func (t *tasks) stop(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.running[id]
	if r == nil {
		return true // it runs on another replica, which sees the cancel (watch)
	}
	if r.ended {
		return false
	}
	r.cancel()
	return true
}

// watch starts, on a replica sharing its store, the one goroutine that
// looks for cancels of the tasks running here made on other replicas;
// it ends when none runs. t.mu is held.
func (t *tasks) watch() {
	if !t.shared || t.watching {
		return
	}
	t.watching = true
	go func() {
		for {
			time.Sleep(cancelPoll)
			t.mu.Lock()
			ids := make([]string, 0, len(t.running))
			for id := range t.running {
				ids = append(ids, id)
			}
			if len(ids) == 0 {
				t.watching = false
				t.mu.Unlock()
				return
			}
			t.mu.Unlock()
			for _, id := range ids {
				if rec, err := t.load(id); err == nil && (rec == nil || rec.Task.Status == mcp.TaskStatusCancelled) {
					t.stop(id)
				}
			}
		}
	}()
}

// cancelPoll is how often a replica looks for cancels made on others.
var cancelPoll = time.Second

func answerResult(id json.RawMessage, res any) []byte {
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{mcp.JSONRPC_VERSION, id, res})
	if err != nil {
		return answerError(id, mcp.INTERNAL_ERROR, "the answer could not be encoded")
	}
	return b
}

func answerError(id json.RawMessage, code int, msg string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{mcp.JSONRPC_VERSION, id, rpcError{code, msg}})
	return b
}

// memTasks is the store of a server that shares nothing: records in
// memory, dropped when they expire.
type memTasks struct {
	mu   sync.Mutex
	recs map[string]memTask
}

type memTask struct {
	identity string
	rec      []byte
	expires  time.Time
}

func newMemTasks() *memTasks { return &memTasks{recs: map[string]memTask{}} }

func (m *memTasks) Create(id, identity string, rec []byte, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	for k, r := range m.recs {
		if now.After(r.expires) {
			delete(m.recs, k)
		}
	}
	m.recs[id] = memTask{identity: identity, rec: rec, expires: now.Add(ttl)}
	return nil
}

func (m *memTasks) Update(id string, rec []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.recs[id]; ok && time.Now().Before(r.expires) {
		r.rec = rec
		m.recs[id] = r
	}
	return nil
}

func (m *memTasks) Get(id string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.recs[id]; ok && time.Now().Before(r.expires) {
		return r.rec, nil
	}
	return nil, nil
}

func (m *memTasks) Count(identity string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, now := 0, time.Now()
	for _, r := range m.recs {
		if r.identity == identity && now.Before(r.expires) {
			n++
		}
	}
	return n, nil
}

func (m *memTasks) List(identity string) ([][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	type kept struct {
		rec     []byte
		expires time.Time
	}
	var ks []kept
	now := time.Now()
	for _, r := range m.recs {
		if r.identity == identity && now.Before(r.expires) {
			ks = append(ks, kept{r.rec, r.expires})
		}
	}
	slices.SortFunc(ks, func(a, b kept) int { return a.expires.Compare(b.expires) })
	out := make([][]byte, len(ks))
	for i, k := range ks {
		out[i] = k.rec
	}
	return out, nil
}

// share keeps the tasks in the fleet's store, so that any replica serves
// tasks/get, tasks/result, tasks/list and tasks/cancel of any task.
func (t *tasks) share(store taskStore, replica string) {
	t.store, t.shared, t.replica = store, true, replica
}
