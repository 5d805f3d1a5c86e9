package httpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/internal/rpcerr"
	"github.com/toolwarden/toolwarden/mcpserver/internal/wire"
)

// A tools/call POST's answer is written by mcp-go's handlePost, which
// encodes the result with CallToolResult.MarshalJSON (a map of its
// fields, json.Marshal'ed: the file's text escaped, the structured
// content escaped again) and then re-reads those ~9 KB per 4 KiB file
// read to compact them, a json.Marshaler's output: a sixth of the
// server's CPU under load. Over stdio wire.WriteAnswer writes the result
// in one pass. Over streamable HTTP, the server's tool middleware hands
// mcp-go a stand-in result instead (StandIn), holding the real one in the
// request's answerSlot, and the answerWriter puts the real result's JSON
// (wire.WriteToolResult) in the stand-in's place as the answer is
// written: the same bytes (mcpserver's TestHTTPAnswerSameAsMcpGos), in
// one pass.

// answerMarker is the _meta member that marks a stand-in result. It is
// only ever encoded as a member name: tool output and request IDs are
// strings, in which its quotes would be escaped.
const answerMarker = "io.toolwarden/answer"

// answerSlot is a tools/call POST's: the result its answer is to carry.
type answerSlot struct {
	held atomic.Pointer[heldAnswer]
}

// heldAnswer is a result held back and the stand-in mcp-go encodes.
type heldAnswer struct {
	result, standIn *mcp.CallToolResult
}

type answerSlotKey struct{}

// splicedAnswers counts the answers written with a held result in place
// of its stand-in.
var splicedAnswers atomic.Int64

// SplicedAnswers is how many tools/call answers carried a held result in
// its stand-in's place (tests check that the one-pass path is taken).
func SplicedAnswers() int64 { return splicedAnswers.Load() }

// StandIn returns what the server's tool middleware hands mcp-go in place
// of res, a tool's result, when ctx is a tools/call POST's on the
// streamable endpoint: a stand-in, whose answer this transport writes with
// res's JSON instead. It returns nil when res is to go to mcp-go as it is:
// another request's result, one that asks for more input, or a second
// result in one request.
func StandIn(ctx context.Context, res *mcp.CallToolResult) *mcp.CallToolResult {
	slot, ok := ctx.Value(answerSlotKey{}).(*answerSlot)
	if !ok {
		return nil
	}
	return slot.hold(res)
}

// hold keeps res back and returns the stand-in for it, or nil when res
// goes to mcp-go as it is: a result that asks for more input (mcp-go
// reads it) or a second result in one request.
func (a *answerSlot) hold(res *mcp.CallToolResult) *mcp.CallToolResult {
	if res.NeedsInput() {
		return nil
	}
	standIn := &mcp.CallToolResult{Result: mcp.Result{Meta: mcp.NewMetaFromMap(map[string]any{answerMarker: true})}}
	if !a.held.CompareAndSwap(nil, &heldAnswer{result: res, standIn: standIn}) {
		return nil
	}
	return standIn
}

// spliceAnswers gives a tools/call POST to the streamable endpoint an
// answerSlot and writes its answer through an answerWriter.
func spliceAnswers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := r.Body.(*checkedBody)
		if r.Method != http.MethodPost || !ok || body.msg.Method != string(mcp.MethodToolsCall) {
			next.ServeHTTP(w, r)
			return
		}
		slot := &answerSlot{}
		ctx, rpc := rpcerr.WithSlot(context.WithValue(r.Context(), answerSlotKey{}, slot))
		modern := mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion))
		next.ServeHTTP(&answerWriter{ResponseWriter: w, slot: slot, rpc: rpc, modern: modern}, r.WithContext(ctx))
	})
}

// answerWriter writes what mcp-go writes, but for the write that carries
// the slot's stand-in: there, the real result; and for the answer of a
// call whose handler chose a JSON-RPC error of its own (rpcerr.Answer):
// there, that error, with the HTTP status 2026-07-28 gives its code.
type answerWriter struct {
	http.ResponseWriter
	slot   *answerSlot
	rpc    func() *rpcerr.Error
	modern bool // the request is of protocol 2026-07-28 or later
}

// WriteHeader gives an answer that is to carry the handler's own error
// that error's status, when the answer is JSON (an event stream's status
// is sent with its first event) of a 2026-07-28 request (the status of an
// earlier revision's error is 200).
func (w *answerWriter) WriteHeader(code int) {
	if e := w.rpcErr(); e != nil && w.modern && code == http.StatusOK && w.Header().Get("Content-Type") != "text/event-stream" {
		code = statusOf(e.Code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *answerWriter) rpcErr() *rpcerr.Error {
	if w.rpc == nil {
		return nil
	}
	return w.rpc()
}

func (w *answerWriter) Write(p []byte) (int, error) {
	if e := w.rpcErr(); e != nil {
		if out, ok := errorAnswer(p, e); ok {
			w.slot.held.Store(nil)
			if _, err := w.ResponseWriter.Write(out); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	h := w.slot.held.Load()
	if h == nil {
		return w.ResponseWriter.Write(p)
	}
	at, end, ok := answerAt(p)
	if !ok {
		// An event before the answer (a notification, a request to the
		// client), written while the handler runs: the stand-in is not
		// read, as mcp-go may be decorating it.
		return w.ResponseWriter.Write(p)
	}
	out, ok, err := h.splice(p, at, end)
	if err != nil {
		// The result cannot be encoded: nothing is written, as mcp-go
		// writes nothing when its encoding fails (it logs the error).
		return 0, err
	}
	if !ok {
		return w.ResponseWriter.Write(p)
	}
	defer wire.PutBuffer(out)
	w.slot.held.Store(nil)
	splicedAnswers.Add(1)
	if _, err := w.ResponseWriter.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// The shapes of a response as mcp-go writes it: JSON (json.Encoder, with
// its newline) or an event (writeSSEEvent), each in one write.
var (
	eventPrefix    = []byte("event: message\ndata: ")
	responsePrefix = []byte(`{"jsonrpc":"2.0","id":`)
	resultMember   = []byte(`,"result":`)
	errorMember    = []byte(`,"error":`)
)

// answerAt finds the result of a JSON-RPC response in p, a write of mcp-go:
// p[at:end] is the value of the response's "result" member, the last member
// of the envelope. ok is false for anything else: notifications (their
// second member is "method"), requests to the client, errors. The result
// is found by the envelope's shape alone, so no string a client or a tool
// chose (a progress token sent back, a log message) can be taken for it.
func answerAt(p []byte) (at, end int, ok bool) {
	body, tail := p, "}\n"
	if bytes.HasPrefix(body, eventPrefix) {
		body, tail = body[len(eventPrefix):], "}\n\n"
	}
	if !bytes.HasPrefix(body, responsePrefix) || !bytes.HasSuffix(body, []byte(tail)) {
		return 0, 0, false
	}
	rest := body[len(responsePrefix):]
	n := idLength(rest)
	if n == 0 || !bytes.HasPrefix(rest[n:], resultMember) {
		return 0, 0, false
	}
	at = len(p) - len(rest) + n + len(resultMember)
	end = len(p) - len(tail)
	return at, end, at < end
}

// errorAnswer returns p, a write of mcp-go, with e in place of its
// response's result or error, the envelope (ID, event framing) kept; false
// when p is no response (a notification, a request to the client).
func errorAnswer(p []byte, e *rpcerr.Error) ([]byte, bool) {
	body, tail := p, "\n"
	if bytes.HasPrefix(body, eventPrefix) {
		body, tail = body[len(eventPrefix):], "\n\n"
	}
	rest, ok := bytes.CutPrefix(body, responsePrefix)
	n := idLength(rest)
	if !ok || n == 0 || !(bytes.HasPrefix(rest[n:], resultMember) || bytes.HasPrefix(rest[n:], errorMember)) {
		return nil, false
	}
	details := struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data,omitempty"`
	}{e.Code, e.Message, e.Data}
	encoded, err := json.Marshal(details)
	if err != nil {
		return nil, false
	}
	at := len(p) - len(rest) + n
	out := append(append(append(append(make([]byte, 0, at+len(encoded)+len(errorMember)+len(tail)+1), p[:at]...), errorMember...), encoded...), '}')
	return append(out, tail...), true
}

// statusOf is the HTTP status of a 2026-07-28 answer with a JSON-RPC
// error of code, as mcp-go maps its own (httpStatusForJSONRPCError).
func statusOf(code int) int {
	switch code {
	case mcp.METHOD_NOT_FOUND:
		return http.StatusNotFound
	case mcp.HEADER_MISMATCH, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, mcp.UNSUPPORTED_PROTOCOL_VERSION,
		mcp.INVALID_REQUEST, mcp.INVALID_PARAMS, mcp.PARSE_ERROR:
		return http.StatusBadRequest
	default:
		return http.StatusOK
	}
}

// idLength is the length of the JSON-RPC ID (a string or a number, as
// json.Marshal writes them) at the start of b, 0 when there is none.
func idLength(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	if b[0] == '"' {
		for i := 1; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return 0
	}
	i := 0
	for i < len(b) && strings.IndexByte("-+.0123456789eE", b[i]) >= 0 {
		i++
	}
	return i
}

// Flush keeps the response streamable (mcp-go upgrades a POST to an event
// stream when the handler sends notifications).
func (w *answerWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *answerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// splice returns p with the result's JSON in place of p[at:end], which
// must be the stand-in's (false if not). mcp-go may have decorated the
// stand-in (for protocol 2026-07-28: resultType, the server's identity
// in _meta): the result gets the same first. It is called for the
// response itself, written once mcp-go is done with the stand-in.
func (h *heldAnswer) splice(p []byte, at, end int) (*bytes.Buffer, bool, error) {
	standIn, err := json.Marshal(h.standIn)
	if err != nil || !bytes.Equal(p[at:end], standIn) {
		return nil, false, nil
	}
	res := decorateLike(h.result, h.standIn)
	buf := wire.Buffer()
	buf.Write(p[:at])
	if err := wire.WriteToolResult(buf, res); err != nil {
		wire.PutBuffer(buf)
		return nil, false, err
	}
	buf.Write(p[end:])
	return buf, true, nil
}

// decorateLike returns res with what mcp-go's decorateResult added to the
// stand-in, as it would have added it to res: a resultType where res has
// none, the server's identity where res's _meta has none that decodes
// (mcp.Meta.ServerInfo), and any other member res lacks. The marker is
// left out, and res itself is left as the tool made it.
func decorateLike(res, standIn *mcp.CallToolResult) *mcp.CallToolResult {
	added := map[string]any{}
	if standIn.Meta != nil {
		for k, v := range standIn.Meta.AdditionalFields {
			missing := res.Meta == nil || !hasField(res.Meta, k)
			if k == mcp.MetaKeyServerInfo {
				missing = res.Meta.ServerInfo() == nil
			}
			if k != answerMarker && missing {
				added[k] = v
			}
		}
	}
	if len(added) == 0 && (standIn.ResultType == "" || res.ResultType != "") {
		return res
	}
	out := *res
	if out.ResultType == "" {
		out.ResultType = standIn.ResultType
	}
	if len(added) > 0 {
		meta := &mcp.Meta{AdditionalFields: map[string]any{}}
		if res.Meta != nil {
			meta.ProgressToken = res.Meta.ProgressToken
			maps.Copy(meta.AdditionalFields, res.Meta.AdditionalFields)
		}
		maps.Copy(meta.AdditionalFields, added)
		out.Meta = meta
	}
	return &out
}

func hasField(m *mcp.Meta, k string) bool {
	_, ok := m.AdditionalFields[k]
	return ok
}
