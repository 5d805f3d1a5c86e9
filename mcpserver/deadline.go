package mcpserver

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/mcpserver/stdio"
	"github.com/toolwarden/toolwarden/tools"
)

// runMargin is how much longer than a tool's own run timeout its call
// deadline is at least: time to start and remove a sandbox, so that the
// sandbox's timeout, not the call deadline, ends a long run.
const runMargin = 5 * time.Second

// runTimeouts maps each tool with its own run timeout (tools.Meta.RunTimeout)
// to it.
func runTimeouts(toolset []tools.Tool) map[string]func(map[string]any) (time.Duration, string) {
	out := map[string]func(map[string]any) (time.Duration, string){}
	for _, t := range toolset {
		if t.Meta.RunTimeout != nil {
			out[t.Tool.Name] = t.Meta.RunTimeout
		}
	}
	return out
}

// callDeadline is how long a call of tool with args may run, and the key
// that sets it. limits.call_timeout is a default for every tool and never
// cuts a tool's own advertised timeout: a tool whose run may take longer
// (run_script's 60 s against a 30 s call_timeout) gets that plus
// runMargin. A limits.tools timeout is the operator's choice for that
// tool and still applies; a run it cuts returns its output so far
// (limit_hit timeout).
func (s *Server) callDeadline(tool string, args any) (time.Duration, string) {
	var atLeast time.Duration
	var rule string
	if run, ok := s.runTimeouts[tool]; ok {
		m, _ := args.(map[string]any)
		atLeast, rule = run(m)
		atLeast += runMargin
	}
	return s.guard.CallTimeoutFor(tool, atLeast, rule)
}

// handlerJob is one call's handler, to be run on a handler goroutine.
type handlerJob struct {
	ctx  context.Context
	next server.ToolHandlerFunc
	req  mcp.CallToolRequest
	done chan handlerReturn
}

// idleHandlers hands a call's handler to a handler goroutine waiting for
// one; at most maxIdleHandlers wait, counted in idleCount.
var (
	idleHandlers = make(chan *handlerJob)
	idleCount    atomic.Int32
)

const maxIdleHandlers = 64

// startHandler runs the handler on a goroutine other than the call's, so
// that the deadline can end the call (runWithDeadline), and delivers what
// it returns. The goroutine is one an earlier call's handler left waiting
// when there is one: a new goroutine's small stack is grown, by copying,
// several times in every call, a reused one has grown already. A handler
// that ignores its deadline keeps its goroutine until it returns; the call
// does not wait for it either way. Handlers must not leave their goroutine
// locked to its thread (none calls runtime.LockOSThread).
func startHandler(ctx context.Context, next server.ToolHandlerFunc, req mcp.CallToolRequest) *handlerJob {
	j := jobs.Get().(*handlerJob)
	j.ctx, j.next, j.req = ctx, next, req
	select {
	case idleHandlers <- j:
	default:
		go serveHandlers(j)
	}
	return j
}

// jobs recycles the jobs of calls whose handler returned in time.
var jobs = sync.Pool{New: func() any { return &handlerJob{done: make(chan handlerReturn, 1)} }}

// release recycles j once what its handler returned has been received:
// its handler goroutine no longer touches it (the send is its last use).
// The job of a call past its deadline is never released: its handler may
// still be running.
func (j *handlerJob) release() {
	j.ctx, j.next, j.req = nil, nil, mcp.CallToolRequest{}
	jobs.Put(j)
}

// serveHandlers runs j, then the handlers startHandler hands it, until
// enough other handler goroutines wait.
func serveHandlers(j *handlerJob) {
	for {
		j.run()
		if idleCount.Add(1) > maxIdleHandlers {
			idleCount.Add(-1)
			return
		}
		j = <-idleHandlers
		idleCount.Add(-1)
	}
}

// run runs the handler and delivers what it returned.
func (j *handlerJob) run() {
	j.done <- runHandler(j.ctx, j.next, j.req)
}

// runHandler runs next, a panic turned into an internal error that fails
// only the call: mcp-go's recovery cannot reach a handler goroutine, and
// on a stdio worker would leave the call's ticket without its end.
func runHandler(ctx context.Context, next server.ToolHandlerFunc, req mcp.CallToolRequest) (r handlerReturn) {
	defer func() {
		if p := recover(); p != nil {
			r = handlerReturn{nil, toolerr.New(toolerr.Internal, "This is a server fault; report it to the operator.",
				"the tool %s failed unexpectedly", req.Params.Name)}
		}
	}()
	res, err := next(ctx, req)
	return handlerReturn{res, err}
}

// runInPlace runs the handler on the goroutine of the call, a stdio
// worker's: no hand-over to a handler goroutine and back, each of which
// wakes another thread. Should the deadline pass or the client cancel
// first, a stand-in settles the call as runWithDeadline would and answers
// it in the worker's place (stdio.Turn.StandIn); the worker, once its
// handler returns, hands what it returned to the stand-in's wait.
func (s *Server) runInPlace(ctx context.Context, turn *stdio.Turn, t *guard.Ticket, key string, next server.ToolHandlerFunc, req mcp.CallToolRequest, why stopping) *mcp.CallToolResult {
	p := inPlaces.Get().(*inPlace)
	p.s, p.ctx, p.turn, p.t, p.key, p.why = s, ctx, turn, t, key, why
	stop := context.AfterFunc(ctx, p.standIn)
	r := runHandler(ctx, next, req)
	if stop() {
		p.release()
		turn.Release()
		return endReturned(ctx, t, r, why)
	}
	p.late <- r
	return <-p.settled
}

// inPlace is a call whose handler runs in place, as its stand-in needs it.
type inPlace struct {
	s       *Server
	ctx     context.Context
	turn    *stdio.Turn
	t       *guard.Ticket
	key     string
	why     stopping
	late    chan handlerReturn
	settled chan *mcp.CallToolResult
	standIn func()
}

// inPlaces recycles the inPlace of calls that ended in time: a stand-in
// never started, and never will.
var inPlaces = sync.Pool{New: func() any {
	p := &inPlace{late: make(chan handlerReturn, 1), settled: make(chan *mcp.CallToolResult, 1)}
	p.standIn = p.settle
	return p
}}

func (p *inPlace) release() {
	p.s, p.ctx, p.turn, p.t, p.key, p.why = nil, nil, nil, nil, "", stopping{}
	inPlaces.Put(p)
}

// settle is the stand-in: it settles the call (lateCalls.settle) and
// answers it.
func (p *inPlace) settle() {
	res := p.s.late.settle(p.t, p.key, p.late, p.why.err(p.ctx))
	p.turn.StandIn(res)
	p.settled <- res
}

// endReturned ends the ticket of a call whose handler returned r before
// its deadline's stand-in (runInPlace) or wait (lateCalls.settle) took
// over: in time, unless the context had ended by then (the stand-in's
// goroutine not yet started, or the return and the end ready together),
// when the call is as late as if they had taken over.
func endReturned(ctx context.Context, t *guard.Ticket, r handlerReturn, why stopping) *mcp.CallToolResult {
	if ctx.Err() != nil {
		return endLate(t, r, why.err(ctx))
	}
	return t.Finish(r.res, r.err)
}

// stopping is the deadline of a call and the key that set it.
type stopping struct {
	rule    string
	timeout time.Duration
}

// err is what the model is told of a call whose context ended: timed
// out, or cancelled by the client.
func (w stopping) err(ctx context.Context) *toolerr.Error {
	if ctx.Err() == context.DeadlineExceeded {
		return toolerr.New(toolerr.Timeout, "Narrow the request, or ask the operator to raise "+w.rule+".",
			"the call did not finish within %s (%s)", w.rule, w.timeout).WithRule(w.rule)
	}
	return toolerr.New(toolerr.Canceled, "", "the call was cancelled by the client")
}
