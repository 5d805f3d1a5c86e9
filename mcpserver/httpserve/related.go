package httpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/internal/jsonrpcstrict"
	"github.com/toolwarden/toolwarden/mcpserver/internal/relay"
)

// The notifications a request's handler sends (progress, log messages)
// relate to that request, and the streamable HTTP transport says they go
// on its POST's stream. mcp-go v1.2.1 loses some of them two ways
// (TestNotificationsOnTheirRequestsStream):
//   - it puts them on the session's one notification channel, which the
//     POST's forwarder and the session's GET stream (when the client opened
//     one, before 2026-07-28) both read, so each went to whichever read
//     first: a client that reads a call's progress on the call's stream
//     (the conformance suite's, Codex's) missed about half;
//   - a notification the forwarder has taken off the channel but not yet
//     written when the answer is written (the handler sent it just before
//     returning) is dropped, in both protocol eras: the suite's client saw
//     2 of 3.
//
// Here, a POST of a request gets its own channel (relatedStream): the
// handler sees its session through relatedSession, whose
// NotificationChannel is that channel, and a relay writes what arrives
// there to the POST's response (the relay starts at the first one: a
// request that sends none costs no goroutine); the answer is written only
// once the relay has written everything sent before it. Broadcasts (list changes)
// still go to the session's channel, as they relate to no request.

type relatedKey struct{}

// relatedStream is a POST's own notification channel and the writer its
// relay and mcp-go share.
type relatedStream struct {
	// relay writes the handler's notifications (relay.Buffer may wait),
	// from the first one on.
	relay *relay.Relay

	// hdr is the header mcp-go sets; it is copied to w's when mcp-go
	// writes the header, as the relay may be writing w's meanwhile.
	hdr http.Header

	mu          sync.Mutex // over w, wroteHeader, sse, held
	w           http.ResponseWriter
	wroteHeader bool
	sse         bool // the response is an event stream
	// held is the status of a JSON answer's header, held back until its
	// body is written (0: none held), so that the answer goes with its
	// length: net/http sends a body it has not measured (over 2 KiB) in
	// chunks, which costs a third write to the connection and has the
	// client read to the last chunk.
	held int
}

// relateNotifications gives a POST of a request a relatedStream, and
// serves it with the stream as its writer. initialize (whose session
// mcp-go registers only after it) is left as it is. A subscriptions/listen
// gets one too: its acknowledgement (which mcp-go tags itself) goes on the
// related channel, and so before its answer (mcp-go's forwarder sometimes
// dropped it, TestListenAcknowledgedFirst); the broadcasts it carries go to
// the session mcp-go registered for it, and on through mcp-go's forwarder,
// which tags them, to the same response.
func relateNotifications(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := r.Body.(*checkedBody)
		if r.Method != http.MethodPost || !ok || body.msg.Kind != jsonrpcstrict.Request ||
			body.msg.Method == string(mcp.MethodInitialize) {
			next.ServeHTTP(w, r)
			return
		}
		rs := &relatedStream{hdr: http.Header{}, w: w}
		rs.relay = relay.New(rs.writeEvent)
		defer rs.finish()
		next.ServeHTTP(rs, r.WithContext(context.WithValue(r.Context(), relatedKey{}, rs)))
		rs.writeHeld()
	})
}

// relateSession is mcp-go's HTTP context function: it gives a request
// with a relatedStream a session whose notifications go there.
func relateSession(mcpServer *server.MCPServer) server.HTTPContextFunc {
	return func(ctx context.Context, r *http.Request) context.Context {
		rs, ok := r.Context().Value(relatedKey{}).(*relatedStream)
		if !ok {
			return ctx
		}
		cs, ok := server.ClientSessionFromContext(ctx).(streamSession)
		if !ok {
			// mcp-go's session is not what this was written for: its
			// notifications go where mcp-go sends them.
			return ctx
		}
		return mcpServer.WithContext(ctx, &relatedSession{streamSession: cs, relay: rs.relay})
	}
}

// streamSession is what mcp-go v1.2.1's streamable HTTP session is: a
// relatedSession is each of these, as the session it stands for.
type streamSession interface {
	server.SessionWithClientInfo
	server.SessionWithProtocolVersion
	server.SessionWithLogging
	server.SessionWithTools
	server.SessionWithResources
	server.SessionWithResourceTemplates
	server.SessionWithStreamableHTTPConfig
	server.SessionWithSubscriptionFilter
	server.SessionWithSampling
	server.SessionWithElicitation
	server.SessionWithRoots
}

// relatedSession is a session as one request's handler sees it: the
// session itself, but for where its notifications go.
type relatedSession struct {
	streamSession
	relay *relay.Relay
}

func (s *relatedSession) NotificationChannel() chan<- mcp.JSONRPCNotification {
	return s.relay.Channel()
}

// finish returns once the relay has written every notification sent so
// far. It is called before the answer is written: the handler has
// returned, so every notification it sent is in the channel or written.
func (rs *relatedStream) finish() { rs.relay.Finish() }

// writeEvent writes n as an event, making the response an event stream
// if it is not one yet, as mcp-go does for its own first notification.
func (rs *relatedStream) writeEvent(n mcp.JSONRPCNotification) {
	data, err := json.Marshal(n)
	if err != nil {
		return
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if !rs.wroteHeader {
		h := rs.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("Connection", "keep-alive")
		rs.writeHeader(http.StatusOK)
	}
	// A failed write is the client gone: mcp-go's own writes fail too.
	_, _ = rs.w.Write(append(append(append(make([]byte, 0, len(data)+len(eventPrefix)+2), eventPrefix...), data...), "\n\n"...))
	if f, ok := rs.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (rs *relatedStream) Header() http.Header { return rs.hdr }

// WriteHeader passes mcp-go's status on, unless the relay has already
// begun the response (mcp-go's second WriteHeader would be logged as
// superfluous). A JSON answer's is held back until its body comes
// (Write), or until the handler returns without one (writeHeld).
func (rs *relatedStream) WriteHeader(code int) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.wroteHeader || rs.held != 0 {
		return
	}
	if rs.hdr.Get("Content-Type") == "application/json" {
		rs.held = code
		return
	}
	rs.writeOwnHeader(code)
}

// writeHeld writes a header held back, if any.
func (rs *relatedStream) writeHeld() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.writeHeldHeader(nil)
}

// writeHeldHeader writes the header held back, if any, with the length of
// body when body is a whole JSON-RPC response (mcp-go writes one in one
// write: json.Encoder's, with its newline).
func (rs *relatedStream) writeHeldHeader(body []byte) {
	if rs.wroteHeader || rs.held == 0 {
		return
	}
	if isAnswer(body) && body[0] == '{' && body[len(body)-1] == '\n' {
		rs.hdr.Set("Content-Length", strconv.Itoa(len(body)))
	}
	rs.writeOwnHeader(rs.held)
}

// writeOwnHeader writes the header mcp-go set.
func (rs *relatedStream) writeOwnHeader(code int) {
	maps.Copy(rs.w.Header(), rs.hdr)
	rs.writeHeader(code)
}

func (rs *relatedStream) writeHeader(code int) {
	rs.wroteHeader = true
	rs.sse = rs.w.Header().Get("Content-Type") == "text/event-stream"
	rs.w.WriteHeader(code)
}

// Write writes what mcp-go writes; before the answer, the notifications
// still waiting. An answer mcp-go writes as JSON on a response the relay
// has made an event stream becomes an event (mcp-go upgrades its own
// answer once the handler has sent a notification, so this is a fallback).
func (rs *relatedStream) Write(p []byte) (int, error) {
	if isAnswer(p) {
		rs.finish()
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.writeHeldHeader(p)
	if !rs.wroteHeader {
		rs.writeOwnHeader(http.StatusOK)
	}
	if rs.sse && len(p) > 0 && p[0] == '{' {
		event := append(append(append(make([]byte, 0, len(p)+len(eventPrefix)+1), eventPrefix...), bytes.TrimRight(p, "\n")...), "\n\n"...)
		if _, err := rs.w.Write(event); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return rs.w.Write(p)
}

func (rs *relatedStream) Flush() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.writeHeldHeader(nil)
	if f, ok := rs.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (rs *relatedStream) Unwrap() http.ResponseWriter { return rs.w }

// isAnswer reports whether p, a write of mcp-go's, is a JSON-RPC response
// (its "result" or "error" right after the ID), as JSON or as an event.
func isAnswer(p []byte) bool {
	body := bytes.TrimPrefix(p, eventPrefix)
	rest, ok := bytes.CutPrefix(body, responsePrefix)
	if !ok {
		return false
	}
	n := idLength(rest)
	return n > 0 && (bytes.HasPrefix(rest[n:], resultMember) || bytes.HasPrefix(rest[n:], errorMember))
}
