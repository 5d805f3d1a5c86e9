package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"
)

// hereServer has "wait", which says it started (on started, when given)
// and blocks until "release" is called or its context ends, and "where",
// which says whether it was served on the reading goroutine (a Turn with
// here set) or by a worker.
func hereServer(release, started chan struct{}) *server.MCPServer {
	srv := server.NewMCPServer("here", "1", server.WithToolCapabilities(false))
	srv.AddTool(mcp.NewTool("wait"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if started != nil {
			close(started)
		}
		select {
		case <-release:
			return mcp.NewToolResultText("released"), nil
		case <-ctx.Done():
			return mcp.NewToolResultText("cancelled"), nil
		}
	})
	srv.AddTool(mcp.NewTool("release"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		close(release)
		return mcp.NewToolResultText("done"), nil
	})
	srv.AddTool(mcp.NewTool("where"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if t, ok := ctx.Value(turnKey{}).(*Turn); ok && t.here != nil {
			return mcp.NewToolResultText("here"), nil
		}
		return mcp.NewToolResultText("worker"), nil
	})
	return srv
}

// hereClient serves srv over pipes and reads its answers by id.
type hereClient struct {
	in      io.WriteCloser
	answers chan map[string]any
	ended   chan error
}

func serveHere(t *testing.T, srv *server.MCPServer) *hereClient {
	t.Helper()
	// A pipe with a buffer, as a client's is: a request is written
	// whether or not the server reads it.
	inR, inW, err := os.Pipe()
	require.NoError(t, err)
	outR, outW := io.Pipe()
	c := &hereClient{in: inW, answers: make(chan map[string]any, 16), ended: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		c.ended <- Serve(ctx, srv, inR, outW, os.Stderr)
		_ = outW.Close()
		_ = inR.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil && m["id"] != nil {
				c.answers <- m
			}
		}
		close(c.answers)
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		select {
		case err := <-c.ended:
			require.NoError(t, err)
		case <-time.After(time.Minute):
			t.Error("the server did not end after the end of input")
			cancel()
		}
		cancel()
	})
	c.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n"+
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	require.Equal(t, float64(0), c.next(t)["id"])
	return c
}

func (c *hereClient) send(t *testing.T, lines string) {
	t.Helper()
	_, err := io.WriteString(c.in, lines)
	require.NoError(t, err)
}

func (c *hereClient) call(t *testing.T, id int, tool string) {
	t.Helper()
	c.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`+"\n", id, tool))
}

// next is the next answer; a minute without one fails the test (the
// server stopped reading).
func (c *hereClient) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m, ok := <-c.answers:
		require.True(t, ok, "the output ended")
		return m
	case <-time.After(time.Minute):
		t.Fatal("no answer within a minute: the reading is held back")
	}
	return nil
}

func textOf(t *testing.T, m map[string]any) string {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	require.True(t, ok, "%v", m)
	content := res["content"].([]any)
	return content[0].(map[string]any)["text"].(string)
}

// TestCallServedWhereItWasRead: a call that comes while no other is being
// served runs on the reading goroutine; one that comes while another runs
// is served by a worker; and a call served where it was read does not
// hold the reading back: "release", read while "wait" (served where it
// was read) still runs, ends it. Were the reading not handed over, the
// release would never be read and wait would never end.
func TestCallServedWhereItWasRead(t *testing.T) {
	c := serveHere(t, hereServer(make(chan struct{}), nil))
	c.call(t, 1, "where")
	require.Equal(t, "here", textOf(t, c.next(t)), "nothing else was being served")

	c.call(t, 2, "wait")
	c.call(t, 3, "where")
	m := c.next(t)
	require.Equal(t, float64(3), m["id"], "answered while wait runs")
	require.Equal(t, "worker", textOf(t, m), "wait was being served")
	c.call(t, 4, "release")
	got := map[float64]string{}
	for range 2 {
		m := c.next(t)
		got[m["id"].(float64)] = textOf(t, m)
	}
	require.Equal(t, map[float64]string{2: "released", 4: "done"}, got)

	// A call is counted until just after its answer is written, so the
	// next may still find wait or release being served: it is asked again
	// until nothing is (a server that never served in place again would
	// answer "worker" to the end).
	deadline := time.Now().Add(time.Minute)
	for id := 5; ; id++ {
		c.call(t, id, "where")
		if textOf(t, c.next(t)) == "here" {
			break
		}
		require.True(t, time.Now().Before(deadline), "served where it was read again once nothing runs")
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCallServedWhereItWasReadIsCancelled: a notifications/cancelled sent
// while a call served where it was read runs reaches it.
func TestCallServedWhereItWasReadIsCancelled(t *testing.T) {
	started := make(chan struct{})
	c := serveHere(t, hereServer(make(chan struct{}), started))
	c.call(t, 1, "wait")
	<-started // mcp-go cancels only a request it is serving
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"test"}}`+"\n")
	c.call(t, 2, "where")
	got := map[float64]string{}
	for range 2 {
		m := c.next(t)
		got[m["id"].(float64)] = textOf(t, m)
	}
	require.Equal(t, "cancelled", got[1], "the cancellation reached the call")
	require.Contains(t, got, float64(2), "and the next call is answered")
}

// onceEOF gives its lines one per Read, then io.EOF once, as a terminal
// does at Ctrl-D, then blocks until the test ends.
type onceEOF struct {
	lines []string
	eof   bool
	end   chan struct{}
}

func (r *onceEOF) Read(p []byte) (int, error) {
	if len(r.lines) > 0 {
		n := copy(p, r.lines[0])
		r.lines[0] = r.lines[0][n:]
		if r.lines[0] == "" {
			r.lines = r.lines[1:]
		}
		return n, nil
	}
	if !r.eof {
		r.eof = true
		return 0, io.EOF
	}
	<-r.end
	return 0, io.EOF
}

// TestLastCallHandedOverEndsInput: the last line, a call with no newline,
// comes with the end of input; served where it was read, it hands the
// reading over before it returns. The end of input must still end Serve,
// though the input says EOF only once (found in review: the goroutine
// that read it returned without it).
func TestLastCallHandedOverEndsInput(t *testing.T) {
	srv := server.NewMCPServer("here", "1", server.WithToolCapabilities(false))
	srv.AddTool(mcp.NewTool("late"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		turn, _ := ctx.Value(turnKey{}).(*Turn)
		if turn == nil || turn.here == nil {
			return mcp.NewToolResultError("not served where it was read"), nil
		}
		for turn.here.state.Load() != handedOver { // the timer's hand-over
			time.Sleep(time.Millisecond)
		}
		return mcp.NewToolResultText("late but done"), nil
	})
	in := &onceEOF{end: make(chan struct{}), lines: []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n",
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"late","arguments":{}}}`,
	}}
	defer close(in.end)
	outR, outW := io.Pipe()
	answers := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			answers <- sc.Text()
		}
	}()
	ended := make(chan error, 1)
	go func() { ended <- Serve(context.Background(), srv, in, outW, os.Stderr) }()
	select {
	case err := <-ended:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("Serve did not end after the end of input")
	}
	require.Contains(t, <-answers, `"id":0`)
	require.Contains(t, <-answers, "late but done")
}

// TestHandedOverReaderReused: a goroutine whose call, served where it was
// read, had the reading handed over, waits to read again, and the next
// hand-over wakes it rather than starting another goroutine, whose stack
// the next call served where it was read would grow again. Three calls
// served where they were read, each handing the reading over itself (the
// second and the third once the goroutine of the one before waits), start
// one reader between them. (A call read before the last one's goroutine
// has counted it answered goes to a worker, which hands nothing over: it
// is sent again.)
func TestHandedOverReaderReused(t *testing.T) {
	d := handOverAfter
	t.Cleanup(func() { handOverAfter = d }) // after Serve has ended (cleanups run last first)
	handOverAfter = time.Hour               // the calls hand over themselves
	srv := server.NewMCPServer("here", "1", server.WithToolCapabilities(false))
	here := 0
	srv.AddTool(mcp.NewTool("late"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		turn, _ := ctx.Value(turnKey{}).(*Turn)
		if turn == nil || turn.here == nil {
			return mcp.NewToolResultText("worker"), nil
		}
		if here++; here > 1 {
			for turn.here.reading.(*lineFilter).waiter.Load() == nil { // the last call's goroutine waits
				time.Sleep(time.Millisecond)
			}
		}
		turn.here.handOver()
		return mcp.NewToolResultText("here"), nil
	})
	before := readersStarted.Load()
	c := serveHere(t, srv)
	for id := 1; here < 3 && id <= 100; id++ {
		c.call(t, id, "late")
		textOf(t, c.next(t))
	}
	require.Equal(t, 3, here, "three calls served where they were read")
	require.Equal(t, int64(1), readersStarted.Load()-before, "the first hand-over starts a reader; the later ones wake the one waiting")
}
