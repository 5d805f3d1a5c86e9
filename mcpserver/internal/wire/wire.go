// Package wire writes the JSON-RPC answers that carry a tool's result in
// one pass, byte for byte as encoding/json would (json.Marshal of the
// message), a structured.Output's JSON written as it is rather than
// encoded again. Both transports use it: stdio for every tools/call
// answer, streamable HTTP for the result it splices into mcp-go's answer.
// It reads no request and knows nothing of sessions or of the guard.
package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/internal/structured"
)

// outputAsJSON marks the context of the calls whose answer WriteAnswer
// writes: their result keeps its structured.Output, whose JSON is
// written as it is.
type outputAsJSON struct{}

// AsJSON returns ctx marked as the context of calls whose answer
// WriteAnswer writes (the stdio transport's).
func AsJSON(ctx context.Context) context.Context {
	return context.WithValue(ctx, outputAsJSON{}, true)
}

// OutputAsJSON reports whether ctx is marked by AsJSON: the server then
// leaves a result's structured.Output as it is (see structured.ForWire).
func OutputAsJSON(ctx context.Context) bool { return ctx.Value(outputAsJSON{}) != nil }

// WriteAnswer writes json.Marshal(msg) to buf, in one pass for a tool
// result: json.Marshal would encode the result (CallToolResult's
// MarshalJSON: a map of its fields, json.Marshal'ed) and then re-read
// those ~9 KB per 4 KiB file read to compact them, a json.Marshaler's
// output. Here the envelope's fields are written in JSONRPCResponse's
// order and the result's by WriteToolResult: the same bytes
// (TestEncodeAnswerSameAsMarshal, FuzzEncodeAnswer).
func WriteAnswer(buf *bytes.Buffer, msg mcp.JSONRPCMessage) error {
	resp, ok := msg.(mcp.JSONRPCResponse)
	if !ok {
		return encodeTo(buf, msg)
	}
	var result *mcp.CallToolResult
	switch r := resp.Result.(type) {
	case *mcp.CallToolResult:
		result = r
	case mcp.CallToolResult:
		result = &r
	}
	if result == nil {
		return encodeTo(buf, msg)
	}
	b := append(buf.AvailableBuffer(), `{"jsonrpc":`...)
	b, err := appendJSON(b, resp.JSONRPC)
	if err != nil {
		return err
	}
	b = append(b, `,"id":`...)
	if b, err = appendID(b, resp.ID); err != nil {
		return err
	}
	buf.Write(append(b, `,"result":`...))
	if err := WriteToolResult(buf, result); err != nil {
		return err
	}
	return buf.WriteByte('}')
}

// WriteToolResult writes json.Marshal(r): the members of the map
// CallToolResult.MarshalJSON makes, in the order encoding/json sorts its
// keys, each encoded by encoding/json, but a structured.Output's JSON as
// it is. That JSON is json.Marshal's output already, which encoding/json's
// compaction of a json.Marshaler's output leaves unchanged; encoding the
// Output's value instead (as mcp-go gets it where it encodes the answer:
// the SSE transport, a call in process) would escape the file's text a
// second time. Streamable HTTP answers tools/call with it too (see
// httpserve's answer writer). TestToolResultFields fails when mcp-go
// adds a field.
func WriteToolResult(buf *bytes.Buffer, r *mcp.CallToolResult) error {
	w := members{buf: buf, enc: json.NewEncoder(buf)}
	buf.WriteByte('{')
	if r.Meta != nil {
		w.member("_meta", r.Meta)
	}
	w.name("content")
	buf.WriteByte('[')
	for i, c := range r.Content {
		if i > 0 {
			buf.WriteByte(',')
		}
		w.value(c)
	}
	buf.WriteByte(']')
	if len(r.InputRequests) > 0 {
		w.member("inputRequests", r.InputRequests)
	}
	if r.IsError {
		w.member("isError", true)
	}
	if r.RequestState != "" {
		w.member("requestState", r.RequestState)
	}
	if r.ResultType != "" {
		w.member("resultType", r.ResultType)
	}
	o, isOutput := r.StructuredContent.(structured.Output)
	switch {
	case len(r.RawStructuredContent) > 0:
		w.member("structuredContent", json.RawMessage(r.RawStructuredContent))
	case isOutput && len(o.JSON) > 0:
		w.name("structuredContent")
		buf.Write(o.JSON)
	case r.StructuredContent != nil:
		w.member("structuredContent", r.StructuredContent)
	}
	buf.WriteByte('}')
	return w.err
}

// members writes an object's members with one encoder, keeping the
// first error.
type members struct {
	buf *bytes.Buffer
	enc *json.Encoder
	n   int
	err error
}

// name writes the separator and "name": (names are plain ASCII).
func (w *members) name(name string) {
	if w.n > 0 {
		w.buf.WriteByte(',')
	}
	w.n++
	w.buf.WriteString(`"` + name + `":`)
}

func (w *members) member(name string, v any) {
	w.name(name)
	w.value(v)
}

// value writes json.Marshal(v): Encode, without its newline.
func (w *members) value(v any) {
	if w.err != nil {
		return
	}
	if w.err = w.enc.Encode(v); w.err == nil {
		w.buf.Truncate(w.buf.Len() - 1)
	}
}

// encodeTo writes json.Marshal(v) to buf: Encode, without its newline.
func encodeTo(buf *bytes.Buffer, v any) error {
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1)
	return nil
}

// buffers recycles the buffers answers are written in.
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Buffer returns an empty buffer to write an answer in; PutBuffer
// recycles it.
func Buffer() *bytes.Buffer { return buffers.Get().(*bytes.Buffer) }

// PutBuffer recycles buf unless a large answer grew it.
func PutBuffer(buf *bytes.Buffer) {
	if buf.Cap() > 256<<10 {
		return
	}
	buf.Reset()
	buffers.Put(buf)
}

// appendJSON appends json.Marshal(v): for the version, "2.0" as it is.
func appendJSON(b []byte, v string) ([]byte, error) {
	if v == mcp.JSONRPC_VERSION {
		return append(b, `"2.0"`...), nil
	}
	m, err := json.Marshal(v)
	return append(b, m...), err
}

// appendID appends json.Marshal(id): an integer id as its digits.
func appendID(b []byte, id mcp.RequestId) ([]byte, error) {
	switch v := id.Value().(type) {
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	}
	m, err := json.Marshal(id)
	return append(b, m...), err
}
