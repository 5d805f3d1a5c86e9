// Package stdio is toolwarden's stdio transport: MCP over a client's
// standard input and output, one JSON-RPC message a line. It checks every
// line strictly (jsonrpcstrict) and refuses requests before initialize,
// drops oversized lines, serves tools/call requests itself (where they
// were read, or on its own workers; answers written in one pass by
// wire), holds the end of input back
// until the requests passed on are answered, and answers a request read
// once the session has ended with an error (ended.go). Everything else it
// leaves to mcp-go's stdio server.
//
// It does not decide anything about a call: mcp-go's MCPServer, built by
// mcpserver with the guard as its tool middleware, answers every request.
// The one thing that server asks of the transport is a call's Turn
// (TurnOf), with which a handler may run on the worker itself.
package stdio

import (
	"context"
	"errors"
	"io"
	"log"

	"github.com/mark3labs/mcp-go/server"
)

// Serve serves MCP on in/out until in closes or ctx is done, answering
// with srv. Logs go to errOut; out carries only protocol messages. Every
// line is checked strictly and requests before initialize are refused
// (filter.go) before mcp-go reads them; tools/call requests are served
// by calls (calls.go).
func Serve(ctx context.Context, srv *server.MCPServer, in io.Reader, out, errOut io.Writer) error {
	return ServeTasks(ctx, srv, nil, in, out, errOut)
}

// Tasks answers MCP task requests (a tools/call with a task request,
// tasks/get, tasks/result, tasks/list, tasks/cancel) in place of mcp-go,
// whose own task handlers keep tasks per session.
type Tasks interface {
	// Claims reports whether a request of method with params is one.
	Claims(method string, params []byte) bool
	// Answer serves the request msg on the session's context and returns
	// its JSON-RPC answer.
	Answer(ctx context.Context, msg []byte) []byte
}

// ServeTasks is Serve with tasks answering the task requests, each on a
// goroutine of its own (tasks/result waits for the task to end).
func ServeTasks(ctx context.Context, srv *server.MCPServer, tasks Tasks, in io.Reader, out, errOut io.Writer) error {
	g := newGate(out)
	errLog := log.New(errOut, "toolwarden stdio: ", log.LstdFlags)
	stdio := server.NewStdioServer(srv)
	stdio.SetErrorLogger(errLog)
	calls := newToolCalls(srv, g, errLog)
	stdio.SetContextFunc(calls.sessionContext)
	lines := newLineFilter(newLineLimitReader(in, MaxLineBytes), g)
	lines.calls = calls
	lines.tasks = tasks
	lines.ended = ctx.Done()
	err := stdio.Listen(ctx, lines, g)
	calls.close()
	if ctx.Err() != nil {
		lines.answerDropped()
	}
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
