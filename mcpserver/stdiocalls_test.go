package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/mcpserver"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/fs"
)

// stdioPeer drives ServeStdio over pipes, a line at a time.
type stdioPeer struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
}

func serveStdioPipes(t *testing.T, s *mcpserver.Server) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	p := &stdioPeer{t: t, in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	p.out.Buffer(make([]byte, 0, 1<<20), 1<<20)
	go func() {
		err := s.ServeStdio(ctx, inR, outW, io.Discard)
		outW.Close()
		p.done <- err
	}()
	t.Cleanup(func() { cancel(); inW.Close() })
	return p
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	_, err := io.WriteString(p.in, line+"\n")
	require.NoError(p.t, err)
}

// next is the id and the whole of the next message out.
func (p *stdioPeer) next() (string, string) {
	p.t.Helper()
	require.True(p.t, p.out.Scan(), "a message out: %v", p.out.Err())
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	require.NoError(p.t, json.Unmarshal(p.out.Bytes(), &m))
	return string(m.ID), p.out.Text()
}

// TestStdioCallsSideBySideAndCancelled: tools/call requests over stdio
// (served by stdioCalls, not mcp-go's stdio server) run side by side, a
// fast call answered while a slow one waits, and a notifications/cancelled
// from the client ends the slow call's handler, which then changed
// nothing; the end of input ends the server.
func TestStdioCallsSideBySideAndCancelled(t *testing.T) {
	f := newFixture(t)
	ws, err := sandbox.Open(f.ws)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	set := []tools.Tool{slowWrite(t, f, closed(), true)}
	for _, tl := range fs.New(ws, f.cfg.FS).Tools() {
		if tl.Tool.Name == "read_file" {
			set = append(set, tl)
		}
	}
	f.cfg.Policy.Allow = []string{"read_file", "write_file"}
	log, err := guard.OpenAuditLog(f.auditPath)
	require.NoError(t, err)
	t.Cleanup(func() { log.Close() })
	g, err := mcpserver.NewGuard(f.cfg, set, log)
	require.NoError(t, err)
	p := serveStdioPipes(t, mcpserver.New(g, set, "test", slog.New(slog.DiscardHandler)))

	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	id, _ := p.next()
	require.Equal(t, "0", id)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"write_file","arguments":{"path":"new.txt","content":"x"}}}`)
	p.send(`{"jsonrpc":"2.0","id":"fast","method":"tools/call","params":{"name":"read_file","arguments":{"path":"hello.txt"}}}`)
	id, msg := p.next()
	require.Equal(t, `"fast"`, id, "the fast call is answered while the slow one runs")
	require.Contains(t, msg, "hello from toolwarden")

	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"test"}}`)
	id, msg = p.next()
	require.Equal(t, `"slow"`, id)
	require.True(t, strings.Contains(msg, "cancel"), "the slow call ends cancelled: %s", msg)
	require.NoError(t, p.in.Close())
	require.NoError(t, <-p.done)
	require.NoFileExists(t, filepath.Join(f.ws, "new.txt"))
}

// TestStdioCallsFlood: a client that pipes in far more tools/call requests
// than the workers and their queue hold (5 and 100) gets each answered
// once: the overflow is served on the reading goroutine, which holds the
// next line back, as mcp-go's stdio server did.
func TestStdioCallsFlood(t *testing.T) {
	f := newFixture(t)
	b := f.server(t)
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	const calls = 400
	for i := 1; i <= calls; i++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"hello.txt"}}}`+"\n", i)
	}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, b.ServeStdio(ctx, strings.NewReader(in.String()), &out, io.Discard))
	seen := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		if string(m.ID) != "0" {
			require.Contains(t, line, "hello from toolwarden", "every call answered with the file")
		}
		seen[string(m.ID)]++
	}
	require.Len(t, seen, calls+1, "one answer per request")
	for id, n := range seen {
		require.Equal(t, 1, n, "request %s answered once", id)
	}
}
