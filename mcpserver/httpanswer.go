package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
)

// A tools/call POST's answer is written by mcp-go's handlePost, which
// encodes the result with CallToolResult.MarshalJSON (a map of its
// fields, json.Marshal'ed: the file's text escaped, the structured
// content escaped again) and then re-reads those ~9 KB per 4 KiB file
// read to compact them, a json.Marshaler's output: a sixth of the
// server's CPU under load. Over stdio writeAnswer writes the result in
// one pass. Over streamable HTTP, toolMiddleware hands mcp-go a
// stand-in result instead, holding the real one in the request's
// answerSlot, and the answerWriter puts the real result's JSON
// (writeToolResult) in the stand-in's place as the answer is written:
// the same bytes (TestHTTPAnswerSameAsMcpGos), in one pass.

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
// of its stand-in (tests check that the path is taken).
var splicedAnswers atomic.Int64

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
		r = r.WithContext(context.WithValue(r.Context(), answerSlotKey{}, slot))
		next.ServeHTTP(&answerWriter{ResponseWriter: w, slot: slot}, r)
	})
}

// answerWriter writes what mcp-go writes, but for the write that carries
// the slot's stand-in: there, the real result.
type answerWriter struct {
	http.ResponseWriter
	slot *answerSlot
}

func (w *answerWriter) Write(p []byte) (int, error) {
	h := w.slot.held.Load()
	if h == nil {
		return w.ResponseWriter.Write(p)
	}
	out, ok, err := h.splice(p)
	if err != nil || !ok {
		// Not the answer (an event before it), or a result that cannot be
		// encoded: mcp-go's bytes go as they are.
		return w.ResponseWriter.Write(p)
	}
	defer putAnswerBuffer(out)
	w.slot.held.Store(nil)
	splicedAnswers.Add(1)
	if _, err := w.ResponseWriter.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush keeps the response streamable (mcp-go upgrades a POST to an event
// stream when the handler sends notifications).
func (w *answerWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *answerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// splice returns p with the stand-in's JSON replaced by the result's,
// false when p does not hold the stand-in. mcp-go may have decorated the
// stand-in (for protocol 2026-07-28: resultType, the server's identity
// in _meta): the result gets the same first.
func (h *heldAnswer) splice(p []byte) (*bytes.Buffer, bool, error) {
	standIn, err := json.Marshal(h.standIn)
	if err != nil {
		return nil, false, err
	}
	at := bytes.Index(p, standIn)
	if at < 0 || !bytes.HasSuffix(p[:at], []byte(`"result":`)) {
		return nil, false, nil
	}
	res := decorateLike(h.result, h.standIn)
	buf := answerBuffers.Get().(*bytes.Buffer)
	buf.Write(p[:at])
	if err := writeToolResult(buf, res); err != nil {
		putAnswerBuffer(buf)
		return nil, false, err
	}
	buf.Write(p[at+len(standIn):])
	return buf, true, nil
}

// decorateLike returns res with what mcp-go added to the stand-in: a
// resultType where res has none, and the _meta members res lacks (the
// marker aside). res itself is left as the tool made it.
func decorateLike(res, standIn *mcp.CallToolResult) *mcp.CallToolResult {
	added := map[string]any{}
	if standIn.Meta != nil {
		for k, v := range standIn.Meta.AdditionalFields {
			if k != answerMarker && (res.Meta == nil || !hasField(res.Meta, k)) {
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
		meta := &mcp.Meta{AdditionalFields: added}
		if res.Meta != nil {
			meta.ProgressToken = res.Meta.ProgressToken
			for k, v := range res.Meta.AdditionalFields {
				meta.AdditionalFields[k] = v
			}
		}
		out.Meta = meta
	}
	return &out
}

func hasField(m *mcp.Meta, k string) bool {
	_, ok := m.AdditionalFields[k]
	return ok
}
