package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"strconv"
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
	c.ctx, c.cancel = context.WithCancel(ctx)
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
	b, err := encodeAnswer(msg)
	if err != nil {
		c.errLog.Printf("Error writing tool response: %v", err)
		return
	}
	if _, err := c.out.Write(append(b, '\n')); err != nil {
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

// encodeAnswer is json.Marshal(msg), in one pass for a tool result.
// encoding/json re-reads a json.Marshaler's output to compact it, and a
// mcp.CallToolResult is one (its MarshalJSON returns json.Marshal of its
// fields): ~9 KB re-read per 4 KiB file read. That output is compact and
// escaped already, so it goes in as it is, between the envelope's fields
// in JSONRPCResponse's order: the same bytes (TestEncodeAnswerSameAsMarshal).
func encodeAnswer(msg mcp.JSONRPCMessage) ([]byte, error) {
	resp, ok := msg.(mcp.JSONRPCResponse)
	if !ok {
		return json.Marshal(msg)
	}
	var result json.Marshaler
	switch r := resp.Result.(type) {
	case *mcp.CallToolResult:
		if r != nil {
			result = r
		}
	case mcp.CallToolResult:
		result = r
	}
	if result == nil {
		return json.Marshal(msg)
	}
	body, err := result.MarshalJSON()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(body)+64)
	b = append(b, `{"jsonrpc":`...)
	if b, err = appendJSON(b, resp.JSONRPC); err != nil {
		return nil, err
	}
	b = append(b, `,"id":`...)
	if b, err = appendID(b, resp.ID); err != nil {
		return nil, err
	}
	b = append(append(b, `,"result":`...), body...)
	return append(b, '}'), nil
}

// appendJSON appends json.Marshal(v): for the version, "2.0" as it is.
func appendJSON(b []byte, v string) ([]byte, error) {
	if v == mcp.JSONRPC_VERSION {
		return append(b, `"2.0"`...), nil
	}
	m, err := json.Marshal(v)
	return append(b, m...), err
}

// appendID appends json.Marshal(id): an integer id as its digits.
func appendID(b []byte, id mcp.RequestId) ([]byte, error) {
	switch v := id.Value().(type) {
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	}
	m, err := json.Marshal(id)
	return append(b, m...), err
}
