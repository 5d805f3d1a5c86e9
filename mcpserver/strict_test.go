package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// hostileRPC are messages mcp-go's lenient decoder would take in some way
// (issue 20.3 and more); each must be refused with the code and echoed id
// listed, naming the rule, on stdio and over HTTP alike.
var hostileRPC = []struct {
	name, msg string
	code      int
	id        string
	rule      string
}{
	{"wrong jsonrpc", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, -32600, "null", `"jsonrpc" must be exactly "2.0"`},
	{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, -32600, "null", `"id" must be a string, an integer or null`},
	{"float id", `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, -32600, "null", "integer"},
	{"huge id", `{"jsonrpc":"2.0","id":123456789012345678901,"method":"tools/list"}`, -32600, "null", "2^53-1"},
	{"id past 2^53", `{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list"}`, -32600, "null", "2^53-1"},
	{"duplicate method", `{"jsonrpc":"2.0","id":2,"method":"ping","method":"tools/call"}`, -32600, "2", "duplicate"},
	{"Method", `{"jsonrpc":"2.0","id":3,"Method":"tools/list"}`, -32600, "3", `unknown member "Method"`},
	{"long-s params", `{"jsonrpc":"2.0","id":4,"method":"tools/call","paramſ":{"name":"read_file","arguments":{"path":"hello.txt"}}}`, -32600, "4", "unknown member"},
	{"case twin in arguments", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"hello.txt","PATH":"../secret.txt"}}}`, -32600, "5", "collides"},
	{"duplicate tool name", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"list_dir","name":"read_file"}}`, -32600, "6", "duplicate"},
	{"trailing garbage", `{"jsonrpc":"2.0","id":7,"method":"ping"} {"x":1}`, -32700, "7", "trailing data"},
	{"not json", `not json`, -32700, "null", "parse error"},
	{"batch", `[{"jsonrpc":"2.0","id":8,"method":"ping"}]`, -32600, "null", "batch"},
	{"deep nesting", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":` + strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000) + `}`, -32600, "9", "nesting"},
	{"null id request", `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, -32600, "null", "not null"},
}

type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// stdioConn is ServeStdio running in-process over pipes.
type stdioConn struct {
	t   *testing.T
	in  *io.PipeWriter
	out *bufio.Scanner
	// ended is closed once ServeStdio has returned err.
	ended chan struct{}
	err   error
}

func serveStdio(t *testing.T) *stdioConn { return serveStdioOn(t, newFixture(t).server(t)) }

// stdioServer is a built server or a bare mcpserver.Server.
type stdioServer interface {
	ServeStdio(ctx context.Context, in io.Reader, out, errOut io.Writer) error
}

// serveStdioOn runs s's ServeStdio over pipes until the test ends or the
// input is closed.
func serveStdioOn(t *testing.T, s stdioServer) *stdioConn {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	c := &stdioConn{t: t, in: inW, ended: make(chan struct{})}
	go func() {
		c.err = s.ServeStdio(ctx, inR, outW, io.Discard)
		outW.Close()
		close(c.ended)
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		go func() { _, _ = io.Copy(io.Discard, outR) }()
		select {
		case <-c.ended:
		case <-time.After(10 * time.Second):
			t.Error("ServeStdio did not return")
		}
	})
	c.out = bufio.NewScanner(outR)
	c.out.Buffer(make([]byte, 1<<20), 16<<20)
	return c
}

// roundTrip sends one line and returns the next line the server writes.
func (c *stdioConn) roundTrip(line string) rpcReply {
	c.t.Helper()
	c.send(line)
	return c.next(line)
}

func (c *stdioConn) send(line string) {
	c.t.Helper()
	_, err := io.WriteString(c.in, line+"\n")
	require.NoError(c.t, err)
}

// next returns the next line the server writes, awaited after what.
func (c *stdioConn) next(what string) rpcReply {
	c.t.Helper()
	got := make(chan bool, 1)
	go func() { got <- c.out.Scan() }()
	select {
	case ok := <-got:
		require.True(c.t, ok, "stdout closed")
	case <-time.After(20 * time.Second):
		c.t.Fatalf("no answer to %.200s", what)
	}
	var r rpcReply
	require.NoError(c.t, json.Unmarshal(c.out.Bytes(), &r), c.out.Text())
	return r
}

func (c *stdioConn) ping(id int) {
	c.t.Helper()
	r := c.roundTrip(`{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"ping"}`)
	require.Equal(c.t, itoa(id), string(r.ID))
	require.Nil(c.t, r.Error)
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func requireRefused(t *testing.T, r rpcReply, code int, id, rule string) {
	t.Helper()
	require.NotNil(t, r.Error, "answered: %s", r.Result)
	require.Equal(t, code, r.Error.Code, r.Error.Message)
	require.Equal(t, id, string(r.ID))
	require.Contains(t, r.Error.Message, rule)
}

// TestStdioStrictJSONRPC sends every hostile message through ServeStdio,
// before and after the handshake, and checks that a ping is answered after
// each one.
func TestStdioStrictJSONRPC(t *testing.T) {
	c := serveStdio(t)
	for i, h := range hostileRPC {
		t.Run("before initialize/"+h.name, func(t *testing.T) {
			c.t = t
			requireRefused(t, c.roundTrip(h.msg), h.code, h.id, h.rule)
			c.ping(1000 + i)
		})
	}
	c.t = t
	require.Nil(t, c.roundTrip(initBody).Error)
	for i, h := range hostileRPC {
		t.Run("after initialize/"+h.name, func(t *testing.T) {
			c.t = t
			requireRefused(t, c.roundTrip(h.msg), h.code, h.id, h.rule)
			c.ping(2000 + i)
		})
	}
	c.t = t
	r := c.roundTrip(`{"jsonrpc":"2.0","id":9007199254740991,"method":"tools/list"}`)
	require.Nil(t, r.Error)
	require.Equal(t, "9007199254740991", string(r.ID), "the largest id answered is echoed exactly")
}

const readHello = `"method":"tools/call","params":{"name":"read_file","arguments":{"path":"hello.txt"}`

// TestStdioRefusesBeforeInitialize: before initialize only initialize,
// ping and server/discover are served, or a request carrying 2026-07-28
// protocol metadata; notifications are dropped silently.
func TestStdioRefusesBeforeInitialize(t *testing.T) {
	c := serveStdio(t)
	r := c.roundTrip(`{"jsonrpc":"2.0","id":1,` + readHello + `}}`)
	requireRefused(t, r, -32600, "1", `"tools/call" before initialize`)
	requireRefused(t, c.roundTrip(`{"jsonrpc":"2.0","id":"x","method":"tools/list"}`), -32600, `"x"`, "send initialize first")
	// A stale or too-old version in _meta is no stand-in for the handshake.
	r = c.roundTrip(`{"jsonrpc":"2.0","id":2,` + readHello + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	requireRefused(t, r, -32600, "2", "before initialize")
	r = c.roundTrip(`{"jsonrpc":"2.0","id":3,` + readHello + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	requireRefused(t, r, -32600, "3", "clientCapabilities")

	// Dropped: the next line out is the ping's answer.
	_, err := io.WriteString(c.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	require.NoError(t, err)
	c.ping(4)
	// server/discover passes the gate; mcp-go serves it to clients that
	// declare 2026-07-28 (and names the version to the others).
	r = c.roundTrip(`{"jsonrpc":"2.0","id":5,"method":"server/discover"}`)
	require.NotNil(t, r.Error)
	require.Contains(t, r.Error.Message, "requires protocol version 2026-07-28")
	r = c.roundTrip(`{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	require.Nil(t, r.Error)
	require.Contains(t, string(r.Result), "2026-07-28")

	r = c.roundTrip(`{"jsonrpc":"2.0","id":6,` + readHello + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	require.Nil(t, r.Error)
	require.Contains(t, string(r.Result), "hello from toolwarden", "a 2026-07-28 request needs no handshake")

	require.Nil(t, c.roundTrip(initBody).Error)
	_, err = io.WriteString(c.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	require.NoError(t, err)
	r = c.roundTrip(`{"jsonrpc":"2.0","id":7,` + readHello + `}}`)
	require.Nil(t, r.Error)
	require.Contains(t, string(r.Result), "hello from toolwarden")
}

// TestHTTPStrictJSONRPC posts every hostile message to the streamable HTTP
// endpoint (in an initialized session) and to the SSE message endpoint:
// 400 with the JSON-RPC error, and the session still answers.
func TestHTTPStrictJSONRPC(t *testing.T) {
	srv := httpServer(t)
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	res := testenv.PostMCP(t, srv.URL+"/mcp", auth, initBody)
	require.Equal(t, http.StatusOK, res.StatusCode)
	session := map[string]string{"Authorization": auth["Authorization"], "Mcp-Session-Id": res.Header.Get("Mcp-Session-Id")}
	for _, path := range []string{"/mcp", "/message?sessionId=unknown"} {
		for i, h := range hostileRPC {
			t.Run(path+"/"+h.name, func(t *testing.T) {
				res := testenv.PostMCP(t, srv.URL+path, session, h.msg)
				require.Equal(t, http.StatusBadRequest, res.StatusCode)
				require.Equal(t, "application/json", res.Header.Get("Content-Type"))
				var r rpcReply
				require.NoError(t, json.NewDecoder(res.Body).Decode(&r))
				requireRefused(t, r, h.code, h.id, h.rule)

				res = testenv.PostMCP(t, srv.URL+"/mcp", session, `{"jsonrpc":"2.0","id":`+itoa(100+i)+`,"method":"ping"}`)
				require.Equal(t, http.StatusOK, res.StatusCode)
				body, _ := io.ReadAll(res.Body)
				require.Contains(t, string(body), `"id":`+itoa(100+i))
			})
		}
	}
}

// TestStdioPipelinedAfterInitialize: a client that writes its initialize,
// notifications/initialized and a first request at once (not waiting for
// the answer, which the spec discourages but does not forbid) is served.
func TestStdioPipelinedAfterInitialize(t *testing.T) {
	c := serveStdio(t)
	// One write: io.Pipe, unlike a real stdin, holds nothing back.
	r := c.roundTrip(initBody + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,` + readHello + `}}`)
	require.Equal(t, "1", string(r.ID))
	require.Nil(t, r.Error)
	require.True(t, c.out.Scan())
	require.Contains(t, c.out.Text(), "hello from toolwarden")
}

// TestStdioFailedInitializeKeepsGateShut: an initialize mcp-go refuses
// does not open the gate.
func TestStdioFailedInitializeKeepsGateShut(t *testing.T) {
	c := serveStdio(t)
	r := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":7}}`)
	require.NotNil(t, r.Error)
	requireRefused(t, c.roundTrip(`{"jsonrpc":"2.0","id":2,`+readHello+`}}`), -32600, "2", "before initialize")
}
