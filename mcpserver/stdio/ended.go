package stdio

import (
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/internal/jsonrpcstrict"
)

// The session ends when Serve's context is done (the binary got SIGTERM
// or SIGINT): mcp-go's Listen returns and the calls close, but the
// reading loop may still read a line, and the output stays open until
// the process exits. A request read then is answered at once, with
// endedAnswer, rather than dropped: its client would wait on its id until
// it noticed the exit. Anything else read then is dropped.

// endedMessage says why a request read after the session ended is refused.
const endedMessage = "the session has ended: the server is shutting down and serves no more requests"

// endedAnswer is the answer to the request id read after the session
// ended: INTERNAL_ERROR (mcp-go has no code of its own for a server
// shutting down), the id echoed byte for byte.
func endedAnswer(id jsontext.Value) []byte {
	return jsonrpcstrict.ErrorResponse(id, mcp.INTERNAL_ERROR, endedMessage)
}

// passToServer hands line, passed on, to mcp-go's Read, unless the session
// ends first: mcp-go then reads no more, and the line is refused.
func (f *lineFilter) passToServer(line []byte) {
	select {
	case f.lines <- line:
	case <-f.ended:
		f.refuseEnded(line)
	}
}

// refuseEnded reports whether the session has ended, and then answers
// line if it is a request (endedAnswer). Read asks it too: a line it
// takes once the session has ended goes to a read mcp-go no longer waits
// for, or to a message it would serve with its context done.
func (f *lineFilter) refuseEnded(line []byte) bool {
	select {
	case <-f.ended:
	default:
		return false
	}
	if m, err := jsonrpcstrict.Check(line); err == nil && m.Kind == jsonrpcstrict.Request {
		f.answer(endedAnswer(m.ID))
	}
	return true
}

// answerDropped answers the request Read last handed to mcp-go if, now
// that Listen has returned, it is still unanswered: Listen waits for every
// request mcp-go took, but a line read in the instant the session ended
// mcp-go may drop (its readNextLine chooses between the line and the
// context at random), and its client would wait on it.
func (f *lineFilter) answerDropped() {
	f.lastMu.Lock()
	line := f.last
	f.lastMu.Unlock()
	if line == nil {
		return
	}
	m, err := jsonrpcstrict.Check(line)
	if err == nil && m.Kind == jsonrpcstrict.Request && f.gate.pending.has(m.ID) {
		f.answer(endedAnswer(m.ID))
	}
}
