package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/internal/structured"
)

// callIDs numbers the tools/call requests sent past mcp-go's client. The
// IDs are strings ("tw-N"), so they never meet the client's own integer
// IDs on the same transport.
var callIDs atomic.Uint64

// callTool calls tool with args on s. On stdio it writes the request to
// the upstream itself and stdioCalls takes the answer from the upstream's
// output before mcp-go's transport sees it, decoding a text-only result
// once: mcp-go's client decodes each answer three times (its reader twice,
// then the result) and prepares HTTP headers a pipe has no use for
// (scripts/bench/upstream.sh). Over HTTP the client, which sets the
// protocol's headers, sends it.
func (s *session) callTool(ctx context.Context, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
	if s.calls == nil {
		call := mcp.CallToolRequest{}
		call.Params.Name = tool
		call.Params.Arguments = args
		return s.client.CallTool(ctx, call)
	}
	id := "tw-" + strconv.FormatUint(callIDs.Add(1), 10)
	if err := ctx.Err(); err != nil {
		return nil, transport.NewError(err)
	}
	line, err := s.callLine(id, tool, args)
	if err != nil {
		return nil, fmt.Errorf("failed to marshal request: %w", err)
	}
	answer, err := s.calls.expect(id)
	if err != nil {
		return nil, transport.NewError(err)
	}
	if _, err := s.calls.w.Write(line); err != nil {
		s.calls.forget(id)
		return nil, transport.NewError(fmt.Errorf("failed to write request: %w", err))
	}
	select {
	case a := <-answer:
		if errors.Is(a.err, transport.ErrTransportClosed) {
			return nil, transport.NewError(a.err)
		}
		return a.res, a.err
	case <-ctx.Done():
		s.calls.forget(id)
		s.cancel(ctx, mcp.NewRequestId(id))
		return nil, transport.NewError(ctx.Err())
	}
}

// callLine is the tools/call request with the string id (callIDs), the
// arguments as validated and the session's _meta envelope, as one line
// ending in a newline: the JSON value encoding/json would give for it,
// put together from its parts (the envelope encoded once per session)
// rather than by reflection over a request and a map each call. The
// arguments are compacted, so that pretty-printed ones stay on the line,
// and refused unless they are one JSON value.
func (s *session) callLine(id, tool string, args json.RawMessage) ([]byte, error) {
	meta, err := s.metaJSON()
	if err != nil {
		return nil, err
	}
	b := bytes.NewBuffer(make([]byte, 0, 96+len(id)+len(tool)+len(args)+len(meta)))
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	for i, v := range []string{id, tool} {
		q, err := jsontext.AppendQuote(b.AvailableBuffer(), v)
		if err != nil {
			return nil, err
		}
		b.Write(q)
		if i == 0 {
			b.WriteString(`,"method":"tools/call","params":{"name":`)
		}
	}
	if len(args) > 0 {
		b.WriteString(`,"arguments":`)
		if err := json.Compact(b, args); err != nil {
			return nil, err
		}
	}
	if len(meta) > 0 {
		b.WriteString(`,"_meta":`)
		b.Write(meta)
	}
	b.WriteString("}}\n")
	return b.Bytes(), nil
}

// metaJSON is the session's _meta envelope as JSON, encoded at its first
// call (the envelope is set before the session serves any).
func (s *session) metaJSON() ([]byte, error) {
	s.metaOnce.Do(func() {
		if s.meta != nil {
			s.metaLine, s.metaErr = json.Marshal(s.meta)
		}
	})
	return s.metaLine, s.metaErr
}

// textResult is a tools/call result of text only, with no field mcp-go's
// CallToolResult would hold elsewhere: most results are, and decoding one
// in a single pass into this costs a third of what CallToolResult's own
// decoding does (it decodes each content item twice, first its type). A
// server speaking 2026-07-28 adds a resultType to every result: without
// it here, each of its answers was decoded four times.
type textResult struct {
	Meta              *mcp.Meta         `json:"_meta,omitempty"`
	ResultType        mcp.ResultType    `json:"resultType,omitempty"`
	Content           []mcp.TextContent `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent,omitempty"`
	IsError           bool              `json:"isError,omitempty"`
}

// decodeResult decodes a tools/call result as mcp-go does: a text-only
// result in one pass (textResult), any other (another content type, any
// field textResult does not hold) by mcp.CallToolResult's own decoding.
// Both give the same content; the structured content is the JSON as sent
// (one pass) or its decoded value. The guard's output filter drops the
// RawStructuredContent mcp-go's decoding keeps beside the value
// (outfilter.Filter.Result), so what leaves is what it filtered.
func decodeResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	var t textResult
	if onePass(raw, &t) && allText(t.Content) {
		return t.result(), nil
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("failed to unmarshal response: %w", err)
	}
	return &res, nil
}

// onePass decodes data into v in a single pass (go-json-experiment's
// decoder: encoding/json scans a message once to check it, then again to
// decode it) and reports whether it could. It refuses what encoding/json
// would read otherwise (a member v does not hold, a name that matches one
// only in another case, a duplicate name, invalid UTF-8), so that where
// it succeeds, encoding/json gives the same value; the callers then
// decode as mcp-go does.
func onePass(data []byte, v any) bool {
	return jsonv2.Unmarshal(data, v, jsonv2.RejectUnknownMembers(true)) == nil
}

// result is t as mcp-go's CallToolResult.
func (t *textResult) result() *mcp.CallToolResult {
	res := &mcp.CallToolResult{Result: mcp.Result{Meta: t.Meta, ResultType: t.ResultType}, IsError: t.IsError}
	if len(t.Content) > 0 {
		res.Content = make([]mcp.Content, len(t.Content))
		for i, c := range t.Content {
			res.Content[i] = c
		}
	}
	if len(t.StructuredContent) > 0 && !bytes.Equal(t.StructuredContent, []byte("null")) {
		// As JSON: the output filter scans it token by token and sends
		// it as it scanned it, with no decoding to a map and encoding
		// back.
		res.StructuredContent = asOutput(t.StructuredContent)
	}
	return res
}

// asOutput is structured content as sent (raw, owned) in the form that
// carries it to the client cheapest, when it is already written as
// json.Marshal would write it (valid, compact, nothing HTML treats
// specially; its strings' escapes are kept either way): a
// structured.Output, whose JSON the stdio and streamable HTTP answers
// write as it is. As json.RawMessage, encoding/json's compaction scanned
// it again as the answer was written: 3 KiB (bareserver's read_file) took
// wire.WriteToolResult 12.8 µs, against 2.3 µs for the Output and ~1.8
// µs to check it here. Any other content stays as sent, byte for byte:
// its text copy, if the upstream sent one, must still equal it for the
// output filter to know it (outfilter's textCopy), as with a Python
// upstream's ", " and ": " (TestAsOutput, FuzzAsOutput,
// TestAsOutputKeepsTheTextCopy).
func asOutput(raw json.RawMessage) any {
	// What json.Marshal escapes: HTML's characters, U+2028 and U+2029.
	if bytes.ContainsAny(raw, "<>&\u2028\u2029") {
		return raw
	}
	buf := formatBufs.Get().(*[]byte)
	formatted, err := jsontext.AppendFormat((*buf)[:0], raw, jsontext.PreserveRawStrings(true))
	same := err == nil && bytes.Equal(formatted, raw)
	if cap(formatted) <= 1<<20 { // a large message's copy is not kept
		*buf = formatted[:0]
		formatBufs.Put(buf)
	}
	if !same {
		return raw
	}
	return structured.Output{Value: raw, JSON: raw}
}

// formatBufs hold asOutput's formatted copies.
var formatBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

func allText(cs []mcp.TextContent) bool {
	for _, c := range cs {
		if c.Type != mcp.ContentTypeText {
			return false
		}
	}
	return true
}

// cancel tells the upstream that the request id is abandoned
// (notifications/cancelled), as mcp-go's client does, off the caller's
// path and best effort.
func (s *session) cancel(ctx context.Context, id mcp.RequestId) {
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: string(mcp.MethodNotificationCancelled),
		Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": id, "reason": ctx.Err().Error()}},
	}}
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = s.rec.SendNotification(ctx, n)
	}()
}
