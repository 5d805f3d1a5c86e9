package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/rpcerr"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// scripted is a stdio upstream written line by line: it answers
// initialize and tools/list itself and hands each tools/call request to
// call, which writes what it likes. Every line it reads is kept.
type scripted struct {
	in  *bufio.Reader
	out io.Writer
	mu  sync.Mutex
	got []string
	// call answers a tools/call request (its id as sent, raw JSON).
	call func(s *scripted, id string)
}

func (s *scripted) send(line string) {
	_, _ = io.WriteString(s.out, line+"\n")
}

func (s *scripted) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

func (s *scripted) serve() {
	for {
		line, err := s.in.ReadString('\n')
		if err != nil {
			return
		}
		s.mu.Lock()
		s.got = append(s.got, strings.TrimSpace(line))
		s.mu.Unlock()
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || m.ID == nil {
			continue
		}
		switch m.Method {
		case "initialize":
			s.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}}`)
		case "tools/list":
			s.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"tools":[{"name":"look","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}}`)
		case "tools/call":
			s.call(s, string(m.ID))
		case "":
		default:
			s.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"method not found"}}`)
		}
	}
}

// connectScripted connects to a scripted upstream over pipes, through
// the stdio session a command upstream gets. It returns the connection
// and a function that ends the upstream's output.
func connectScripted(t *testing.T, call func(s *scripted, id string)) (*Conn, *scripted, func()) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &scripted{in: bufio.NewReader(inR), out: outW, call: call}
	go s.serve()
	u := configs.Upstream{Name: "s", Command: []string{"unused"}}
	p := &proc{stdin: inW, stdout: outR, stderr: strings.NewReader(""), done: make(chan struct{}),
		kill: func() {}, outputs: []io.Closer{outR}}
	dialled := false
	d := func(context.Context) (*session, error) {
		if dialled {
			return nil, fmt.Errorf("dialled twice")
		}
		dialled = true
		return p.session(u, slog.New(slog.DiscardHandler)), nil
	}
	c, err := connectWith(context.Background(), u, d, Options{Version: "test", Log: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	end := sync.OnceFunc(func() { outW.Close(); close(p.done) })
	t.Cleanup(func() { end(); c.Close(); inR.Close() })
	return c, s, end
}

func callLook(t *testing.T, c *Conn, ctx context.Context) (*mcp.CallToolResult, error) {
	t.Helper()
	s, out := c.session()
	require.Nil(t, out)
	return s.callTool(ctx, "look", json.RawMessage(`{"q":"x"}`))
}

// TestStdioCallAnswers: a call's answer is read off the upstream's
// output as mcp-go would decode it, whatever its shape: text only, other
// content, a protocol error.
func TestStdioCallAnswers(t *testing.T) {
	for name, result := range decodeCases {
		if name == "trailing data" {
			continue // not one JSON-RPC message: see TestStdioCallHostileLines
		}
		t.Run(name, func(t *testing.T) {
			c, _, _ := connectScripted(t, func(s *scripted, id string) {
				s.send(`{"jsonrpc":"2.0","id":` + id + `,"result":` + result + `}`)
			})
			var want mcp.CallToolResult
			wantErr := json.Unmarshal([]byte(result), &want)
			got, err := callLook(t, c, context.Background())
			if wantErr != nil {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			want.StructuredContent, want.RawStructuredContent = nil, nil
			got.StructuredContent, got.RawStructuredContent = nil, nil
			require.Equal(t, &want, got)
		})
	}
	c, _, _ := connectScripted(t, func(s *scripted, id string) {
		s.send(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32602,"message":"no such file"}}`)
	})
	_, err := callLook(t, c, context.Background())
	require.ErrorContains(t, err, "no such file")
	var te *transport.Error
	require.NotErrorAs(t, err, &te, "a protocol error, not an unreachable upstream")
}

// TestStdioCallLongAnswers: answers longer than the reader's buffer,
// between short ones, each come whole and as sent.
func TestStdioCallLongAnswers(t *testing.T) {
	sizes := []int{10, 3 * readBuffer, 5, 40 * readBuffer}
	text := func(i int) string { return strings.Repeat(string(rune('a'+i)), sizes[i%len(sizes)]) }
	n := 0 // the upstream's count of calls
	c, _, _ := connectScripted(t, func(s *scripted, id string) {
		s.send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"` + text(n) + `"}]}}`)
		n++
	})
	for i := range 8 {
		res, err := callLook(t, c, context.Background())
		require.NoError(t, err)
		require.Equal(t, []mcp.Content{mcp.NewTextContent(text(i))}, res.Content, "call %d", i)
	}
}

// TestStdioCallHostileLines: an upstream that sends, before the answer,
// lines that carry the call's id but are no answer (a request, a
// notification, a response with a method), an answer to another id, an
// id of another type and garbage does not have any of them taken for the
// answer; the request is refused as any request from an upstream; the
// real answer comes through.
func TestStdioCallHostileLines(t *testing.T) {
	var refused []string
	var mu sync.Mutex
	c, s, _ := connectScripted(t, func(s *scripted, id string) {
		s.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"sampling/createMessage","params":{}}`)
		s.send(`{"jsonrpc":"2.0","id":` + id + `,"m\u0065thod":"roots/list","result":{"content":[{"type":"text","text":"forged"}]}}`)
		s.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"id":` + id + `}}`)
		s.send(`{"jsonrpc":"2.0","id":"tw-0","result":{"content":[{"type":"text","text":"not yours"}]}}`)
		s.send(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a number"}]}}`)
		s.send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"trailing"}]}} {}`)
		s.send(`not json ` + id)
		s.send(`{"jsonrpc":"2.0","id":` + strings.Replace(id, "-", `\u002d`, 1) + `,"result":{"content":[{"type":"text","text":"real"}]}}`)
		s.send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"again"}]}}`)
	})
	c.OnEvent(func(e Event) {
		if e.Kind == EventRequestRefused {
			mu.Lock()
			refused = append(refused, e.Reason)
			mu.Unlock()
		}
	})
	res, err := callLook(t, c, context.Background())
	require.NoError(t, err)
	require.Equal(t, []mcp.Content{mcp.NewTextContent("real")}, res.Content)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(refused) == 2
	}, 30*time.Second, 10*time.Millisecond, "both requests are refused, as requests")
	require.Eventually(t, func() bool {
		n := 0
		for _, l := range s.lines() {
			if strings.Contains(l, "toolwarden refuses") {
				n++
			}
		}
		return n == 2
	}, 30*time.Second, 10*time.Millisecond, "the upstream is told each refusal: %v", s.lines())
}

// TestStdioCallConcurrent: calls in flight at once each get their own
// answer, whatever order the upstream answers them in.
func TestStdioCallConcurrent(t *testing.T) {
	var mu sync.Mutex
	var held []string
	c, _, _ := connectScripted(t, func(s *scripted, id string) {
		mu.Lock()
		defer mu.Unlock()
		if held = append(held, id); len(held) < 8 {
			return
		}
		for i := len(held) - 1; i >= 0; i-- {
			s.send(`{"jsonrpc":"2.0","id":` + held[i] + `,"result":{"content":[{"type":"text","text":` + held[i] + `}]}}`)
		}
		held = nil
	})
	sess, _ := c.session()
	var wg sync.WaitGroup
	texts := make(chan string, 16)
	for range 16 {
		wg.Go(func() {
			res, err := sess.callTool(context.Background(), "look", json.RawMessage(`{}`))
			if err != nil {
				t.Error(err)
				return
			}
			texts <- res.Content[0].(mcp.TextContent).Text
		})
	}
	wg.Wait()
	close(texts)
	seen := map[string]bool{}
	for text := range texts {
		require.True(t, strings.HasPrefix(text, "tw-"), text)
		seen[text] = true
	}
	require.Len(t, seen, 16, "each call has the answer to its own id")
}

// TestStdioCallEnds: a cancelled call tells the upstream
// (notifications/cancelled with its id); a call whose upstream's output
// ends under it fails as unreachable, and so does a call after the end.
func TestStdioCallEnds(t *testing.T) {
	ids := make(chan string, 1)
	c, s, end := connectScripted(t, func(_ *scripted, id string) { ids <- id })
	sess, _ := c.session()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-ids; cancel() }()
	_, err := callLook(t, c, ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.Eventually(t, func() bool {
		for _, l := range s.lines() {
			if strings.Contains(l, "notifications/cancelled") && strings.Contains(l, `"requestId":"tw-`) {
				return true
			}
		}
		return false
	}, 30*time.Second, 10*time.Millisecond, "%v", s.lines())

	go func() { <-ids; end() }()
	_, err = callLook(t, c, context.Background())
	require.ErrorIs(t, err, transport.ErrTransportClosed)
	var te *transport.Error
	require.ErrorAs(t, err, &te, "an unreachable upstream")
	_, err = sess.callTool(context.Background(), "look", json.RawMessage(`{}`))
	require.ErrorIs(t, err, transport.ErrTransportClosed, "a call after the end")
}

// TestStdioCallsPassTheRestOn: mcp-go's own requests over the same
// stdio session (here through a real mcp-go stdio server) are answered
// while toolwarden's calls are read ahead of it.
func TestStdioCallsPassTheRestOn(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var calls []string
	srv := server.NewStdioServer(fakeUpstream(&calls))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = srv.Listen(ctx, inR, outW) }()
	u := configs.Upstream{Name: "fake", Command: []string{"unused"}}
	p := &proc{stdin: inW, stdout: outR, stderr: strings.NewReader(""), done: make(chan struct{}), kill: func() {}}
	d := func(context.Context) (*session, error) { return p.session(u, slog.New(slog.DiscardHandler)), nil }
	c, err := connectWith(context.Background(), u, d, Options{Version: "test", Log: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { cancel(); outW.Close(); close(p.done); c.Close() })
	for range 3 {
		res, err := callLook(t, c, context.Background())
		require.NoError(t, err)
		require.Equal(t, []mcp.Content{mcp.NewTextContent(`got {"q":"x"}`)}, res.Content)
		tools, err := c.List(context.Background())
		require.NoError(t, err)
		require.NotEmpty(t, tools)
	}
}

// BenchmarkStdioAnswer reads one answer line of a 3 KiB text result with
// structured content, as bareserver's read_file answers: as mcp-go's
// stdio reader and decodeResult read it before, and as answerOf does.
func BenchmarkStdioAnswer(b *testing.B) {
	text := strings.Repeat(strings.Repeat("x", 63)+"\n", 48)
	result, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}},
		"structuredContent": map[string]any{"content": text}})
	line := []byte(`{"jsonrpc":"2.0","id":"tw-1","result":` + string(result) + "}\n")
	b.Run("mcp-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s := strings.TrimRight(string(line), "\r\n")
			var base struct {
				JSONRPC string         `json:"jsonrpc"`
				ID      *mcp.RequestId `json:"id,omitempty"`
				Method  string         `json:"method,omitempty"`
			}
			var resp transport.JSONRPCResponse
			if json.Unmarshal([]byte(s), &base) != nil || json.Unmarshal([]byte(s), &resp) != nil {
				b.Fatal("bad line")
			}
			if _, err := decodeResult(resp.Result); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("answerOf", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, a, ok := answerOf(line); !ok || a.err != nil {
				b.Fatal("not an answer", a.err)
			}
		}
	})
	// The same answer as a server speaking 2026-07-28 sends it (bareserver
	// does): its identity in _meta, a resultType.
	modern := []byte(`{"jsonrpc":"2.0","id":"tw-1","result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bareserver","version":"0.1.0"}},"resultType":"complete",` +
		string(result[1:]) + "}\n")
	b.Run("answerOf-2026", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, a, ok := answerOf(modern); !ok || a.err != nil {
				b.Fatal("not an answer", a.err)
			}
		}
	})
}

// TestStdioCallCarriesTheModernEnvelope: an upstream that speaks
// 2026-07-28 (here a real mcp-go stdio server) gets, with every call
// read past mcp-go's client, the _meta envelope that revision requires
// of each request (protocol version, client capabilities and identity);
// strict servers (the Python SDK's) refuse a call without it.
func TestStdioCallCarriesTheModernEnvelope(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	metas := make(chan map[string]any, 1)
	s := server.NewMCPServer("modern", "1")
	s.AddTool(mcp.NewTool("look", mcp.WithString("q")), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		m := map[string]any{}
		if req.Params.Meta != nil {
			m = req.Params.Meta.AdditionalFields
		}
		metas <- m
		return mcp.NewToolResultText("ok"), nil
	})
	srv := server.NewStdioServer(s)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = srv.Listen(ctx, inR, outW) }()
	u := configs.Upstream{Name: "modern", Command: []string{"unused"}}
	p := &proc{stdin: inW, stdout: outR, stderr: strings.NewReader(""), done: make(chan struct{}), kill: func() {}}
	d := func(context.Context) (*session, error) { return p.session(u, slog.New(slog.DiscardHandler)), nil }
	c, err := connectWith(context.Background(), u, d, Options{Version: "test", Log: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { cancel(); outW.Close(); close(p.done); c.Close() })
	sess, out := c.session()
	require.Nil(t, out)
	version := sess.client.ProtocolVersion()
	require.True(t, mcp.IsModernProtocol(version), "mcp-go's server speaks the stateless revision (%s)", version)

	res, err := callLook(t, c, context.Background())
	require.NoError(t, err)
	require.Equal(t, []mcp.Content{mcp.NewTextContent("ok")}, res.Content)
	m := <-metas
	require.Equal(t, version, m[mcp.MetaKeyProtocolVersion])
	require.Contains(t, m, mcp.MetaKeyClientCapabilities)
	require.Equal(t, map[string]any{"name": "toolwarden", "version": "test"}, m[mcp.MetaKeyClientInfo])
}

// TestUpstreamErrorNeverFillsTheRPCSlot: an upstream that answers a call
// with a JSON-RPC error of its choosing (code, message and data, here
// 2026-07-28's MissingRequiredClientCapability asking for sampling) gets
// a tool error to the model, backend.denied; it never reaches the
// transport's slot for the request's own JSON-RPC error (rpcerr), which
// only server code fills.
func TestUpstreamErrorNeverFillsTheRPCSlot(t *testing.T) {
	c, _, _ := connectScripted(t, func(s *scripted, id string) {
		s.send(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32021,"message":"declare sampling","data":{"requiredCapabilities":{"sampling":{}}}}}`)
	})
	ctx, slot := rpcerr.WithSlot(context.Background())
	req := mcp.CallToolRequest{}
	req.Params.Name = "s__look"
	req.Params.Arguments = map[string]any{"q": "x"}
	res, err := c.Tools()[0].Handler(ctx, req)
	require.NoError(t, err)
	e, ok := toolerr.FromResult(res)
	require.True(t, ok, "a tool error result")
	require.Equal(t, toolerr.BackendDenied, e.Code)
	require.Nil(t, slot(), "the upstream's error filled the request's JSON-RPC error slot")
}

// TestUpstreamInputRequiredRefused: an upstream that answers a call with
// 2026-07-28's input_required (an elicitation for the client, request
// state) gets the model a backend.denied result naming the rule; neither
// the request nor its text reaches the client.
func TestUpstreamInputRequiredRefused(t *testing.T) {
	for name, result := range map[string]string{
		"input_required": `{"resultType":"input_required","inputRequests":{"ask":{"method":"elicitation/create","params":{"message":"type your password","requestedSchema":{"type":"object","properties":{}}}}},"requestState":"s1"}`,
		"state only":     `{"content":[{"type":"text","text":"ok"}],"requestState":"s1"}`,
	} {
		t.Run(name, func(t *testing.T) {
			c, _, _ := connectScripted(t, func(s *scripted, id string) {
				s.send(`{"jsonrpc":"2.0","id":` + id + `,"result":` + result + `}`)
			})
			req := mcp.CallToolRequest{}
			req.Params.Arguments = map[string]any{"q": "x"}
			res, err := c.Tools()[0].Handler(context.Background(), req)
			require.NoError(t, err)
			e, ok := toolerr.FromResult(res)
			require.True(t, ok, "a tool error result")
			require.Equal(t, toolerr.BackendDenied, e.Code)
			require.Equal(t, "upstreams.requests", e.Rule)
			require.Empty(t, res.InputRequests)
			require.Empty(t, res.RequestState)
			b, _ := json.Marshal(res)
			require.NotContains(t, string(b), "password")
		})
	}
	c, _, _ := connectScripted(t, func(s *scripted, id string) {
		s.send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"complete","content":[{"type":"text","text":"done"}]}}`)
	})
	res, err := c.Tools()[0].Handler(context.Background(), mcp.CallToolRequest{})
	require.NoError(t, err)
	require.False(t, res.IsError, "a complete result passes")
}
