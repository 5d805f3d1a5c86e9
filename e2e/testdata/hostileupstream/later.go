package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// status is the tool a new version of the server adds: annotated
// read-only, or (readOnly false) listed again with no annotation at all,
// as an upstream that takes the claim back would.
func status(readOnly bool) mcp.Tool {
	if !readOnly {
		t := mcp.NewTool("status", mcp.WithDescription("Reports the service status."))
		t.Annotations = mcp.ToolAnnotation{}
		return t
	}
	return mcp.NewTool("status", mcp.WithReadOnlyHintAnnotation(true), mcp.WithDescription("Reports the service status."))
}

func statusHandler(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultText("status: up"), nil
}

// later is what the server changes after a number of calls, each time
// after the answer is out: it lists status (read-only) after addStatus
// calls and again without the annotation after unmarkStatus, each time
// saying so (tools/list_changed); after the first call it floods its
// client with flood tools/list_changed notifications (and as many
// prompts/list_changed with prompts) in one write.
type later struct {
	s                       *server.MCPServer
	out                     *lockedWriter
	lists                   *listCounter
	addStatus, unmarkStatus int64
	flood                   int
	prompts                 bool
}

func (l *later) afterCall(n int64) {
	switch n {
	case l.addStatus:
		go l.s.AddTool(status(true), statusHandler)
	case l.unmarkStatus:
		go l.s.AddTool(status(false), statusHandler)
	}
	if n == 1 && l.flood > 0 {
		go l.floodListChanged()
	}
}

// floodListChanged writes the flood as one message stream, holding the
// writer: no answer is written inside it, and each answer the flood
// provokes comes after all of it.
func (l *later) floodListChanged() {
	methods := []mcp.MCPMethod{mcp.MethodNotificationToolsListChanged}
	if l.prompts {
		methods = append(methods, mcp.MethodNotificationPromptsListChanged)
	}
	var b strings.Builder
	for range l.flood {
		for _, m := range methods {
			b.WriteString(`{"jsonrpc":"2.0","method":"` + string(m) + `"}` + "\n")
		}
	}
	l.lists.begin()
	if _, err := io.WriteString(l.out, b.String()); err != nil {
		os.Exit(4)
	}
	l.lists.sent(l.flood)
}

// listCounter counts the tools/list and prompts/list requests that come
// once a flood began, and writes the counts to file after each.
type listCounter struct {
	file string

	mu       sync.Mutex
	flooding bool
	counts   struct {
		Sent        int `json:"sent"`
		ToolsList   int `json:"tools_list"`
		PromptsList int `json:"prompts_list"`
	}
}

func (c *listCounter) begin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flooding = true
	c.write()
}

func (c *listCounter) sent(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts.Sent = n
	c.write()
}

// listed counts one listing of method, if a flood began.
func (c *listCounter) listed(method mcp.MCPMethod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.flooding {
		return
	}
	if method == mcp.MethodToolsList {
		c.counts.ToolsList++
	} else {
		c.counts.PromptsList++
	}
	c.write()
}

// write replaces the file whole, so that a reader never sees half of it.
func (c *listCounter) write() {
	if c.file == "" {
		return
	}
	data, _ := json.Marshal(c.counts)
	tmp := c.file + ".tmp"
	if os.WriteFile(tmp, data, 0o644) != nil || os.Rename(tmp, c.file) != nil {
		os.Exit(5)
	}
}

// hook counts the listings.
func (c *listCounter) hook(hooks *server.Hooks) {
	hooks.AddBeforeListTools(func(context.Context, any, *mcp.ListToolsRequest) { c.listed(mcp.MethodToolsList) })
	hooks.AddBeforeListPrompts(func(context.Context, any, *mcp.ListPromptsRequest) { c.listed(mcp.MethodPromptsList) })
}

// lockedWriter makes each Write whole: mcp-go writes each message in one
// Write, and the flood holds it for all of its own.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// serveStdio is server.ServeStdio, writing through out.
func serveStdio(s *server.MCPServer, out io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return server.NewStdioServer(s).Listen(ctx, os.Stdin, out)
}
