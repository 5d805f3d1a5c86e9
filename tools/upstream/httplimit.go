package upstream

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
)

// capTransport caps what a url upstream sends, as lineLimit does for a
// stdio one: a response body (one JSON-RPC message) or, in an event
// stream, one event may be at most max bytes. mcp-go's client reads
// either without a bound (json.Decoder, bufio.Reader.ReadString), so the
// cap is enforced under it, on the body, and a message over it is never
// held whole: its reader gets a *MessageTooLargeError at byte max+1 and
// the connection is closed.
type capTransport struct {
	base http.RoundTripper
	max  int
	// over is told of each message cut, with the request that carried it.
	over func(*http.Request, *MessageTooLargeError)
}

func (c capTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	resp.Body = &cappedBody{rc: resp.Body, max: c.max, stream: media == "text/event-stream",
		over: func(e *MessageTooLargeError) { c.over(req, e) }}
	return resp, nil
}

// cappedBody is a response body whose messages are capped: the whole body
// or, in an event stream (stream), each event, which ends at a blank
// line.
type cappedBody struct {
	rc     io.ReadCloser
	max    int
	stream bool
	over   func(*MessageTooLargeError)
	n      int  // bytes of the current message
	line   bool // the current line has content (stream)
	err    error
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.rc.Read(p)
	for i, c := range p[:n] {
		if b.stream {
			switch c {
			case '\n':
				if !b.line { // a blank line ends the event
					b.n = 0
					continue
				}
				b.line = false
			case '\r':
			default:
				b.line = true
			}
		}
		if b.n++; b.n > b.max {
			e := &MessageTooLargeError{Max: b.max, Remote: true}
			b.err = e
			b.rc.Close()
			b.over(e)
			return i, e
		}
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }

// capNote holds the message cut during one request, if one was: mcp-go
// does not always pass a body's read error on (an event stream that
// breaks off is "unexpected nil response"), so the call asks here.
type capNote struct {
	mu  sync.Mutex
	err *MessageTooLargeError
}

type capNoteKey struct{}

// withCapNote is ctx carrying a fresh note for the requests made under it.
func withCapNote(ctx context.Context) (context.Context, *capNote) {
	n := &capNote{}
	return context.WithValue(ctx, capNoteKey{}, n), n
}

func (n *capNote) set(e *MessageTooLargeError) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.err == nil {
		n.err = e
	}
}

// get is the message cut under the note's requests, nil if none was.
func (n *capNote) get() error {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.err == nil {
		return nil
	}
	return n.err
}

func noteOf(ctx context.Context) *capNote {
	n, _ := ctx.Value(capNoteKey{}).(*capNote)
	return n
}

// cutOr is the message cut under note's requests, when one was, wrapped
// with err; else err.
func cutOr(n *capNote, err error) error {
	if cut := n.get(); cut != nil {
		return fmt.Errorf("%w (%v)", cut, err)
	}
	return err
}
