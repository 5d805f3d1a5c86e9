package upstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// stdioCalls reads a stdio upstream's output ahead of mcp-go's transport
// and takes from it the answers to the tools/call requests callTool sent
// itself; every other line (the answers to mcp-go's own requests, the
// upstream's notifications and requests) is passed on to the transport,
// in order, as read. mcp-go's reader decodes each line twice before the
// result is decoded a third time; a text-only answer is decoded here in
// one pass (scripts/bench/upstream.sh).
type stdioCalls struct {
	// w is the upstream's stdin, shared with the transport.
	w *lockedWriter
	// fwd is what the transport reads.
	fwd *io.PipeWriter

	mu      sync.Mutex
	pending map[string]chan callAnswer
	ended   bool
}

// callAnswer is what became of one call: its result or why there is none.
type callAnswer struct {
	res *mcp.CallToolResult
	err error
}

// newStdioCalls starts reading out; the transport is to read toTransport
// and write to stdin.
func newStdioCalls(out io.Reader, in io.WriteCloser) (c *stdioCalls, toTransport io.Reader, stdin io.WriteCloser) {
	r, w := io.Pipe()
	c = &stdioCalls{w: &lockedWriter{w: in}, fwd: w, pending: map[string]chan callAnswer{}}
	go c.read(out)
	return c, r, c.w
}

// readBuffer is the size of the reader's buffer, kept while the upstream
// runs: most answers fit it; a longer line (up to the message cap, which
// lineLimit enforces) is gathered in a buffer of its own.
const readBuffer = 8 << 10

// read routes each line of out until it ends, then fails the calls still
// waiting and ends the transport's input. A last line with no newline is
// dropped, as mcp-go's reader drops it.
func (c *stdioCalls) read(out io.Reader) {
	br := bufio.NewReaderSize(out, readBuffer)
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, chunk...)
			continue
		}
		if err != nil {
			c.end()
			return
		}
		line := chunk
		if len(long) > 0 {
			long = append(long, chunk...)
			line = long
		}
		c.route(line)
		if long = long[:0]; cap(long) > 1<<20 {
			long = nil // a large message's buffer is not kept
		}
	}
}

// route delivers line to the call it answers or passes it on.
func (c *stdioCalls) route(line []byte) {
	if c.waiting() {
		if id, a, ok := answerOf(line); ok && c.deliver(id, a) {
			return
		}
	}
	// An error means the transport was closed: nothing reads any more.
	_, _ = c.fwd.Write(line)
}

// textAnswer is a response whose result is text only (textResult), with
// no field it does not hold: read in one pass.
type textAnswer struct {
	JSONRPC string                   `json:"jsonrpc"`
	ID      json.RawMessage          `json:"id"`
	Result  *textResult              `json:"result"`
	Error   *mcp.JSONRPCErrorDetails `json:"error"`
}

// anyMessage is any message, to tell a response from the rest as mcp-go
// tells them: a message with a method is no response.
type anyMessage struct {
	ID     json.RawMessage          `json:"id"`
	Method string                   `json:"method"`
	Result json.RawMessage          `json:"result"`
	Error  *mcp.JSONRPCErrorDetails `json:"error"`
}

// answerOf reads line as a response with a string id: the id and what it
// says, decoded as mcp-go would decode it (decodeResult). ok is false for
// any other message.
func answerOf(line []byte) (id string, a callAnswer, ok bool) {
	var t textAnswer
	if onePass(line, &t) && (t.Error != nil || (t.Result != nil && allText(t.Result.Content))) {
		if id, ok = stringID(t.ID); !ok {
			return "", a, false
		}
		if t.Error != nil {
			return id, callAnswer{err: t.Error.AsError()}, true
		}
		return id, callAnswer{res: t.Result.result()}, true
	}
	var m anyMessage
	if json.Unmarshal(line, &m) != nil || m.Method != "" {
		return "", a, false
	}
	if id, ok = stringID(m.ID); !ok {
		return "", a, false
	}
	if m.Error != nil {
		return id, callAnswer{err: m.Error.AsError()}, true
	}
	res, err := decodeResult(m.Result)
	return id, callAnswer{res: res, err: err}, true
}

// stringID is the value of a JSON string id; ok is false for any other.
func stringID(raw json.RawMessage) (id string, ok bool) {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : n-1]), true
	}
	return id, json.Unmarshal(raw, &id) == nil
}

// waiting reports whether a call waits for its answer.
func (c *stdioCalls) waiting() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending) > 0
}

// expect registers the call id before its request is sent.
func (c *stdioCalls) expect(id string) (<-chan callAnswer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return nil, transport.ErrTransportClosed
	}
	ch := make(chan callAnswer, 1)
	c.pending[id] = ch
	return ch, nil
}

// forget drops a call that no longer waits.
func (c *stdioCalls) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, id)
}

// deliver gives a its call, if one waits for id.
func (c *stdioCalls) deliver(id string, a callAnswer) bool {
	c.mu.Lock()
	ch, ok := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ok {
		ch <- a
	}
	return ok
}

// end fails the waiting calls, as mcp-go fails its requests when the
// output ends, and gives the transport the end of its input.
func (c *stdioCalls) end() {
	c.mu.Lock()
	c.ended = true
	for id, ch := range c.pending {
		ch <- callAnswer{err: transport.ErrTransportClosed}
		delete(c.pending, id)
	}
	c.mu.Unlock()
	c.close()
}

// close ends the transport's input (it reads EOF) and lets go a line
// being passed on to a transport that no longer reads.
func (c *stdioCalls) close() { _ = c.fwd.Close() }

// lockedWriter is an upstream's stdin, written by callTool and by the
// transport: a line is written whole, never interleaved with another.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close closes stdin at once, even under a write blocked on a full pipe.
func (l *lockedWriter) Close() error { return l.w.Close() }
