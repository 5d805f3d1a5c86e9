package stdio

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/internal/jsonrpcstrict"
)

// lineFilter stands between stdin and mcp-go's stdio server: each line is
// checked strictly (jsonrpcstrict) and, until initialize has succeeded,
// gated (gate). A refused request is answered here, on out, and
// never reaches mcp-go; the server keeps reading.
//
// The lines are read by a loop of the filter's own (read), started at
// mcp-go's first Read: it serves tools/call requests (calls) and hands
// every other line passed on to mcp-go, whose Read takes it from lines.
// The loop runs on one goroutine at a time: a call it serves itself
// (toolCalls.serve) that takes long has another goroutine take the
// reading over.
type lineFilter struct {
	src  *bufio.Reader
	out  io.Writer // the gate's writer, shared with mcp-go
	gate *gate
	// lines carries the lines passed on to mcp-go, in order; closed once
	// input has ended, srcErr then saying why.
	lines chan []byte
	// srcErr is the error that ended the input, set by the reading loop.
	srcErr  error
	start   sync.Once
	pending []byte
	// answered is closed once the initialize passed on has its answer.
	answered <-chan struct{}
	// calls serves the tools/call requests passed on, when set.
	calls *toolCalls
	// tasks answers the task requests passed on, when set.
	tasks Tasks
	// ended is closed once the session has ended (Serve's context done):
	// mcp-go reads no more, and a request read then is refused (ended.go).
	ended <-chan struct{}
	// last is the line Read last handed to mcp-go (answerDropped).
	lastMu sync.Mutex
	last   []byte
	// waiter is the channel of the goroutine waiting to read again
	// (awaitReading), closed to have it go on reading; readingEnded is
	// closed once the input has ended and lines is closed.
	waiter       atomic.Pointer[chan struct{}]
	readingEnded chan struct{}
}

func newLineFilter(in io.Reader, g *gate) *lineFilter {
	return &lineFilter{src: bufio.NewReader(in), out: g, gate: g, lines: make(chan []byte), readingEnded: make(chan struct{})}
}

// Read gives mcp-go the lines the loop passed on.
func (f *lineFilter) Read(p []byte) (int, error) {
	f.start.Do(func() { go f.read() })
	for len(f.pending) == 0 {
		line, ok := <-f.lines
		if !ok {
			return 0, f.srcErr // set before lines was closed
		}
		// The check and the note of line are one step for answerDropped,
		// which looks once the session has ended: either line is refused
		// here, or answerDropped sees it.
		f.lastMu.Lock()
		if f.refuseEnded(line) {
			f.lastMu.Unlock()
			return 0, io.EOF // mcp-go has stopped reading, or will not use line
		}
		f.last = line
		f.lastMu.Unlock()
		f.pending = line
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// read reads the input a line at a time until it ends, or until a call
// served on this goroutine has handed the reading over to another. The
// error that ended the input is kept (srcErr) for whichever goroutine
// reads on: a last line comes with it, and a terminal says EOF only once.
func (f *lineFilter) read() {
	for f.srcErr == nil {
		f.awaitInitialize()
		line, err := f.src.ReadBytes('\n')
		if err == io.EOF && len(line) > 0 {
			// mcp-go drops a last line without its newline: end it.
			line = append(line, '\n')
		}
		f.srcErr = err
		if len(line) > 0 {
			pass, handedOver := f.admit(line)
			if pass != nil {
				f.passToServer(pass)
			}
			if handedOver && !f.awaitReading() {
				return // the reading goes on on another goroutine
			}
		}
	}
	if f.srcErr == io.EOF {
		// The client closed its input: its requests still get answers.
		f.gate.pending.wait(drainLimit)
	}
	close(f.lines)
	close(f.readingEnded)
}

// awaitInitialize holds the next line back until the initialize request
// passed on has been answered, so that a client pipelining requests
// behind its initialize (the spec only says it SHOULD NOT) is served
// instead of refused by a race with the handshake.
func (f *lineFilter) awaitInitialize() {
	if f.answered == nil {
		return
	}
	select {
	case <-f.answered:
	case <-f.ended:
	case <-time.After(initializeWait):
	}
	f.answered = nil
}

// initializeWait bounds that wait, should an answer never come.
const initializeWait = 30 * time.Second

// admit returns line if it may go on to mcp-go, else answers it (requests)
// or drops it (blank lines, notifications and responses) and returns nil.
// handedOver is true when a call served here took long enough for the
// reading to go on on another goroutine (toolCalls.serve).
func (f *lineFilter) admit(line []byte) (pass []byte, handedOver bool) {
	if len(trimSpace(line)) == 0 {
		return nil, false
	}
	m, err := jsonrpcstrict.Check(line)
	if err != nil {
		f.answer(err.(*jsonrpcstrict.Error).Response())
		return nil, false
	}
	if f.gate.opened() {
		return f.passOn(m, line)
	}
	switch {
	case m.Kind != jsonrpcstrict.Request:
		return nil, false // nothing to say before the handshake, nothing to answer
	case m.Method == string(mcp.MethodInitialize):
		f.answered = f.gate.expect(m.ID)
		return f.passOn(m, line)
	case preHandshake[m.Method] || modernRequest(m.Params):
		return f.passOn(m, line)
	}
	refusal := &jsonrpcstrict.Error{Code: jsonrpcstrict.CodeInvalidRequest, ID: m.ID,
		Reason: quoteMethod(m.Method) + " before initialize: send initialize first (only initialize, ping and server/discover come before it), or carry protocol version 2026-07-28 metadata (protocolVersion and clientCapabilities) in params._meta"}
	f.answer(refusal.Response())
	return nil, false
}

// passOn returns line for mcp-go, noting a request among those to answer
// before the end of input is passed on, and a response as the client's
// answer to the server. A tools/call request goes to calls instead.
func (f *lineFilter) passOn(m jsonrpcstrict.Message, line []byte) (pass []byte, handedOver bool) {
	switch m.Kind {
	case jsonrpcstrict.Request:
		if m.Method != string(mcp.MethodSubscriptionsListen) {
			// A listen is answered only when the session ends: the end
			// of input does not wait for it.
			f.gate.pending.asked(m.ID)
		}
		if f.tasks != nil && f.calls != nil && f.tasks.Claims(m.Method, m.Params) {
			ctx := f.calls.ctx
			go f.answer(f.tasks.Answer(ctx, line))
			return nil, false
		}
		if f.calls != nil && m.Method == string(mcp.MethodToolsCall) {
			return nil, f.calls.serve(line, m.ID, f)
		}
		if f.calls != nil && m.Method == string(mcp.MethodSubscriptionsListen) {
			f.calls.listen(line, m.ID)
			return nil, false
		}
	case jsonrpcstrict.Response:
		f.gate.pending.replied(m.ID)
	}
	return line, false
}

func (f *lineFilter) answer(msg []byte) {
	_, _ = f.out.Write(append(msg, '\n'))
}

// preHandshake are the methods served before initialize has succeeded.
var preHandshake = map[string]bool{
	string(mcp.MethodInitialize):     true,
	string(mcp.MethodPing):           true,
	string(mcp.MethodServerDiscover): true,
}

// modernRequest reports whether params carry valid 2026-07-28 per-request
// protocol metadata, which stands in for the handshake (as over HTTP).
func modernRequest(params []byte) bool {
	var p struct {
		Meta *mcp.Meta `json:"_meta"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil || p.Meta == nil {
		return false
	}
	v := p.Meta.ProtocolVersion()
	return mcp.IsModernProtocol(v) && mcp.IsValidProtocolVersion(v) && p.Meta.ClientCapabilities() != nil
}

func quoteMethod(m string) string {
	b, _ := json.Marshal(m)
	if len(b) > 80 {
		b = append(b[:77], `..."`...)
	}
	return string(b)
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}
