package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// stdioCalls serves a stdio connection's tools/call requests in place of
// mcp-go's stdio server, which would re-read each request three times
// more (as a message, for its method, as a possible answer to the
// server) and encode each answer twice. The stdio filter hands the
// request over once checked; mcp-go's MCPServer still answers it
// (HandleMessage: the same handlers, middleware and guard, the same
// cancellation), on the session's context; only the reading and the
// encoding of the answer are done here (toolCallAnswer). Like mcp-go's,
// a few workers take the calls from a bounded queue and a call that
// finds the queue full is served on the reading goroutine.
type stdioCalls struct {
	srv    *server.MCPServer
	out    io.Writer // the stdioGate: one Write per message
	errLog *log.Logger

	ctx    context.Context // the stdio session's, set by sessionContext
	cancel context.CancelFunc
	queue  chan json.RawMessage
	wg     sync.WaitGroup
}

// The worker pool and queue sizes of mcp-go's stdio server (its defaults,
// which ServeStdio used).
const (
	stdioCallWorkers = 5
	stdioCallQueue   = 100
)

func newStdioCalls(srv *server.MCPServer, out io.Writer, errLog *log.Logger) *stdioCalls {
	return &stdioCalls{srv: srv, out: out, errLog: errLog, queue: make(chan json.RawMessage, stdioCallQueue)}
}

// sessionContext is mcp-go's stdio context hook: it is handed the
// session's context (the stdio client session attached) before the first
// line is read, keeps it for the calls, and starts the workers.
func (c *stdioCalls) sessionContext(ctx context.Context) context.Context {
	c.ctx, c.cancel = context.WithCancel(context.WithValue(ctx, outputAsJSON{}, true))
	for range stdioCallWorkers {
		c.wg.Go(c.work)
	}
	return ctx
}

// serve queues a tools/call request, or serves it now when the queue is
// full (which holds the next line back, as mcp-go does).
func (c *stdioCalls) serve(req json.RawMessage) {
	select {
	case c.queue <- req:
	default:
		c.errLog.Printf("Tool call queue full, processing synchronously")
		c.answer(req)
	}
}

func (c *stdioCalls) work() {
	for req := range c.queue {
		c.answer(req)
	}
}

// close ends the calls once input has ended: their context is cancelled,
// as mcp-go's are, and the workers are waited for.
func (c *stdioCalls) close() {
	if c.cancel == nil {
		return // never started: Listen failed before reading
	}
	c.cancel()
	close(c.queue)
	c.wg.Wait()
}

// answer has mcp-go answer req and writes the answer.
func (c *stdioCalls) answer(req json.RawMessage) {
	msg := c.handle(req)
	if msg == nil {
		return
	}
	buf := answerBuffers.Get().(*bytes.Buffer)
	defer putAnswerBuffer(buf)
	if err := writeAnswer(buf, msg); err != nil {
		c.errLog.Printf("Error writing tool response: %v", err)
		return
	}
	buf.WriteByte('\n')
	if _, err := c.out.Write(buf.Bytes()); err != nil {
		c.errLog.Printf("Error writing tool response: %v", err)
	}
}

// handle runs HandleMessage, a panic turned into the INTERNAL_ERROR answer
// mcp-go's worker would give.
func (c *stdioCalls) handle(req json.RawMessage) (msg mcp.JSONRPCMessage) {
	defer func() {
		if r := recover(); r != nil {
			c.errLog.Printf("panic recovered in stdio tool call worker: %v", r)
			var head struct {
				ID mcp.RequestId `json:"id"`
			}
			_ = json.Unmarshal(req, &head)
			msg = mcp.NewJSONRPCError(head.ID, mcp.INTERNAL_ERROR, fmt.Sprintf("internal panic: %v", r), nil)
		}
	}()
	return c.srv.HandleMessage(c.ctx, req)
}
