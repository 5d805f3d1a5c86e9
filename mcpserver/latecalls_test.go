package mcpserver_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/mcpserver"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/fs"
)

// teeAudit writes to the real audit log and hands each line to the test,
// which so waits for the line of a call that ends after its response.
type teeAudit struct {
	*audit.Log
	lines chan audit.Entry
}

func (a teeAudit) Append(e audit.Entry) error {
	err := a.Log.Append(e)
	a.lines <- e
	return err
}

// nextLine returns the next audit line. The wait is a failsafe against a
// hung test, not a timing assertion.
func (a teeAudit) nextLine(t *testing.T) audit.Entry {
	t.Helper()
	select {
	case e := <-a.lines:
		return e
	case <-time.After(30 * time.Second):
		t.Fatal("no audit line")
	}
	return audit.Entry{}
}

// transports are the ways a test's client reaches the server: mcp-go's
// in-process client (the handler runs on a handler goroutine) and
// ServeStdio over pipes (the handler runs in place on a stdio worker, with
// a stand-in to answer for it).
var transports = []struct {
	name   string
	client func(t *testing.T, s *mcpserver.Server) *client.Client
}{{"in-process", inProcessClient}, {"stdio", stdioClient}}

func inProcessClient(t *testing.T, s *mcpserver.Server) *client.Client {
	c, err := client.NewInProcessClient(s.MCP())
	require.NoError(t, err)
	connect(t, c)
	return c
}

// stdioClient is an mcp-go client of s's ServeStdio over pipes. When the
// test ends the client closes the server's input, and ServeStdio must
// return, whatever handlers still run.
func stdioClient(t *testing.T, s *mcpserver.Server) *client.Client {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ended := make(chan error, 1)
	go func() {
		err := s.ServeStdio(context.Background(), inR, outW, io.Discard)
		outW.Close()
		ended <- err
	}()
	t.Cleanup(func() { // after the client's Close, which closes inW
		go func() { _, _ = io.Copy(io.Discard, outR) }()
		select {
		case err := <-ended:
			require.NoError(t, err)
		case <-time.After(20 * time.Second):
			t.Error("ServeStdio did not return after its input closed")
		}
	})
	c := client.NewClient(transport.NewIO(outR, inW, io.NopCloser(strings.NewReader(""))))
	connect(t, c)
	return c
}

// lateServer serves tool with a 50 ms deadline (the handlers below wait
// for it, so its length matters to no assertion) and the given grace
// period and bound on abandoned calls, to a client over transport.
func lateServer(t *testing.T, f *fixture, tool tools.Tool, grace time.Duration, maxAbandoned int, transport func(*testing.T, *mcpserver.Server) *client.Client) (*client.Client, teeAudit) {
	t.Helper()
	f.cfg.Policy.Allow = []string{tool.Tool.Name}
	f.cfg.Limits.Tools = map[string]configs.ToolLimits{tool.Tool.Name: {Timeout: 50 * time.Millisecond}}
	log, err := audit.Open(f.auditPath)
	require.NoError(t, err)
	t.Cleanup(func() { log.Close() })
	audit := teeAudit{log, make(chan audit.Entry, 64)}
	g, err := mcpserver.NewGuard(f.cfg, []tools.Tool{tool}, audit)
	require.NoError(t, err)
	s := mcpserver.New(g, []tools.Tool{tool}, "test", slog.New(slog.DiscardHandler))
	s.SetLateCalls(grace, maxAbandoned)
	return transport(t, s), audit
}

// slowWrite is the real write_file behind a handler that first waits for
// the call's deadline and then for release, and writes under the call's
// context (a handler that honours it) or regardless of it (one that does
// not).
func slowWrite(t *testing.T, f *fixture, release <-chan struct{}, honour bool) tools.Tool {
	t.Helper()
	ws, err := sandbox.Open(f.ws)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	for _, tl := range fs.New(ws, f.cfg.FS).Tools() {
		if tl.Tool.Name == "write_file" {
			// New alone sets no approval modes (Build does); this test is
			// not about asking.
			tl.Meta.RequiresApproval = false
			write := tl.Handler
			tl.Handler = func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				<-ctx.Done()
				<-release
				if !honour {
					ctx = context.WithoutCancel(ctx)
				}
				return write(ctx, req)
			}
			return tl
		}
	}
	t.Fatal("no write_file")
	return tools.Tool{}
}

func closed() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// ending is an audit line's outcome and code.
func ending(e audit.Entry) string { return string(e.Outcome) + "/" + e.Code }

// TestLateCallsAreAuditedAsTheyEnd: whatever a handler does after its
// deadline, the audit line says it, and the file on disk agrees.
func TestLateCallsAreAuditedAsTheyEnd(t *testing.T) {
	tests := []struct {
		name    string
		honour  bool   // the handler writes under the call's context
		path    string // written by the call
		ending  string // the audit line that ends the call
		code    toolerr.Code
		written bool
	}{
		{"a write stopped before its commit is not written", true, "late.txt", "failed/limit.timeout", toolerr.Timeout, false},
		{"a write that lands within the grace is completed_late", false, "late.txt", "completed_late/", "", true},
		{"a late failure is completed_late with its code", false, "missing/late.txt", "completed_late/not_found", toolerr.NotFound, false},
	}
	for _, tr := range transports {
		for _, tt := range tests {
			t.Run(tr.name+"/"+tt.name, func(t *testing.T) {
				f := newFixture(t)
				c, audit := lateServer(t, f, slowWrite(t, f, closed(), tt.honour), time.Minute, 4, tr.client)
				res := callTool(t, c, "write_file", map[string]any{"path": tt.path, "content": "landed\n"})
				require.Equal(t, tt.code, toolerr.ErrorCode(res), "%+v", res.Content)
				require.Equal(t, "allowed/", ending(audit.nextLine(t)))
				require.Equal(t, tt.ending, ending(audit.nextLine(t)))
				_, err := os.Stat(filepath.Join(f.ws, tt.path))
				require.Equal(t, tt.written, err == nil, "on disk: %v", err)
			})
		}
	}
}

// TestAbandonedCallsAreAuditedWhenTheyEnd: a handler still running after
// the grace period is audited abandoned, and its end is audited when it
// comes: completed_late when the write landed, failed when it gave up.
func TestAbandonedCallsAreAuditedWhenTheyEnd(t *testing.T) {
	for _, tt := range []struct {
		honour  bool
		outcome audit.Outcome
		code    toolerr.Code
		written bool
	}{{false, guard.OutcomeCompletedLate, "", true}, {true, guard.OutcomeFailed, toolerr.Timeout, false}} {
		for _, tr := range transports {
			t.Run(tr.name+"/"+string(tt.outcome), func(t *testing.T) {
				f := newFixture(t)
				release := make(chan struct{})
				c, audit := lateServer(t, f, slowWrite(t, f, release, tt.honour), time.Millisecond, 4, tr.client)
				e := errorOf(t, callTool(t, c, "write_file", map[string]any{"path": "late.txt", "content": "landed\n"}))
				require.Equal(t, toolerr.Timeout, e.Code)
				require.Equal(t, "limits.tools.write_file.timeout", e.Rule)
				require.Contains(t, e.Message, "it may yet complete")
				require.Equal(t, "allowed/", ending(audit.nextLine(t)))
				require.Equal(t, "abandoned/limit.timeout", ending(audit.nextLine(t)))
				require.NoFileExists(t, filepath.Join(f.ws, "late.txt"), "nothing is written while the handler waits")

				close(release)
				require.Equal(t, string(tt.outcome)+"/"+string(tt.code), ending(audit.nextLine(t)))
				_, err := os.Stat(filepath.Join(f.ws, "late.txt"))
				require.Equal(t, tt.written, err == nil, "on disk: %v", err)
				require.Equal(t, []string{"write_file:allowed:allowed", "write_file:abandoned:allowed", "write_file:" + string(tt.outcome) + ":allowed"},
					auditTrail(t, f.auditPath), "the log file holds the same lines")
			})
		}
	}
}

// TestAbandonedCallsAreBoundedPerIdentity: at limits.max_abandoned
// abandoned handlers still running, the identity's next call is denied
// (limit.abandoned) without running; once one ends, calls run again.
func TestAbandonedCallsAreBoundedPerIdentity(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			release := make(chan struct{})
			var runs atomic.Int32
			slow := tools.New("slow", "Waits.", tools.Annotations{Title: "Slow", ReadOnly: true}, tools.Meta{Toolset: "test"},
				func(ctx context.Context, in slowIn) (slowOut, error) {
					runs.Add(1)
					if in.Wait == "block" {
						<-ctx.Done()
						<-release
					}
					return slowOut{Done: true}, nil
				})
			f := newFixture(t)
			c, audit := lateServer(t, f, slow, time.Millisecond, 1, tr.client)
			require.Equal(t, toolerr.Timeout, errorOf(t, callTool(t, c, "slow", map[string]any{"wait": "block"})).Code)
			require.Equal(t, "allowed/", ending(audit.nextLine(t)))
			require.Equal(t, "abandoned/limit.timeout", ending(audit.nextLine(t)))

			e := errorOf(t, callTool(t, c, "slow", map[string]any{"wait": "no"}))
			require.Equal(t, toolerr.Abandoned, e.Code)
			require.Equal(t, "limits.max_abandoned", e.Rule)
			require.Contains(t, e.Hint, "limits.max_abandoned")
			denied := audit.nextLine(t)
			require.Equal(t, "denied/limit.abandoned", ending(denied))
			require.Equal(t, "limits.max_abandoned", denied.Rule)
			require.Equal(t, guard.ArgsDigest(map[string]any{"wait": "no"}), denied.ArgsSHA256)
			require.Equal(t, int32(1), runs.Load(), "the denied call never ran")

			close(release)
			require.Equal(t, "completed_late/", ending(audit.nextLine(t)))
			require.False(t, callTool(t, c, "slow", map[string]any{"wait": "no"}).IsError, "the ended call no longer counts")
			require.Equal(t, int32(2), runs.Load())
		})
	}
}

// TestStdioWorkersOutliveStuckHandlers: over stdio a handler runs on one
// of the few workers; handlers that ignore their deadline, more of them
// than there are workers, are each answered at the deadline by a stand-in
// and leave the server serving other calls; and the end of input ends
// ServeStdio while they still run (stdioClient's cleanup, before release).
func TestStdioWorkersOutliveStuckHandlers(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // the last cleanup: ServeStdio has returned
	var stuck atomic.Int32
	slow := tools.New("slow", "Waits.", tools.Annotations{Title: "Slow", ReadOnly: true}, tools.Meta{Toolset: "test"},
		func(ctx context.Context, in slowIn) (slowOut, error) {
			if in.Wait == "block" {
				stuck.Add(1)
				defer stuck.Add(-1)
				<-release
			}
			return slowOut{Done: true}, nil
		})
	f := newFixture(t)
	const blocked = 8 // more than stdioCallWorkers (5)
	c, audit := lateServer(t, f, slow, time.Millisecond, blocked+1, stdioClient)
	for range blocked {
		e := errorOf(t, callTool(t, c, "slow", map[string]any{"wait": "block"}))
		require.Equal(t, toolerr.Timeout, e.Code)
		require.Contains(t, e.Message, "left running")
		require.Equal(t, "allowed/", ending(audit.nextLine(t)))
		require.Equal(t, "abandoned/limit.timeout", ending(audit.nextLine(t)))
	}
	require.Equal(t, int32(blocked), stuck.Load(), "every blocked handler still runs")
	require.False(t, callTool(t, c, "slow", map[string]any{"wait": "no"}).IsError, "a call is still served beside them")
	require.Equal(t, "allowed/", ending(audit.nextLine(t)))
	require.Equal(t, "completed/", ending(audit.nextLine(t)))
}
