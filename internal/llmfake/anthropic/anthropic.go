// Package anthropic is a local stand-in for the Anthropic Messages API
// (POST /v1/messages, streaming or not): it replays scripted assistant
// turns to the client's main loop and records every request, so a test
// can drive Claude Code through tool calls and read what reached the model.
package anthropic

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/toolwarden/toolwarden/internal/llmfake"
)

// Block is one content block of a scripted assistant turn: a text, or a
// tool_use with its input.
type Block struct {
	Text  string
	Tool  string
	ID    string
	Input map[string]any
}

// Text is a text block.
func Text(s string) Block { return Block{Text: s} }

// ToolUse is a tool_use block.
func ToolUse(id, name string, input map[string]any) Block {
	return Block{Tool: name, ID: id, Input: input}
}

// Request is one request the client sent.
type Request struct {
	Path string
	Body map[string]any
	// Main is true for the main loop's requests: those that declare a
	// tool whose name starts with the server's MainToolPrefix.
	Main bool
}

// Server is the fake endpoint.
type Server struct {
	*httptest.Server
	llmfake.Recorder[Request]
	prefix string
	script *llmfake.Script[[]Block]
}

// New starts a fake whose main-loop requests (those declaring a tool named
// with mainToolPrefix, such as "mcp__toolwarden__") get turns in order;
// the client's side requests (titles, summaries) get a short text.
func New(mainToolPrefix string, turns ...[]Block) *Server {
	s := &Server{prefix: mainToolPrefix, script: llmfake.NewScript(turns)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1/messages") {
		s.Problem("unexpected %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/count_tokens") {
		writeJSON(w, map[string]any{"input_tokens": 100})
		return
	}
	var req Request
	req.Path = r.URL.Path
	if err := json.Unmarshal(body, &req.Body); err != nil {
		s.Problem("request body is not JSON: %v", err)
	}
	req.Main = s.declaresMainTool(req.Body)
	s.Record(req)
	blocks := s.script.Reply(req.Main, []Block{Text("ok")}, []Block{Text("the script is over")}, s.Problem)
	msg := message(blocks)
	if stream, _ := req.Body["stream"].(bool); stream {
		writeStream(w, msg, blocks)
		return
	}
	writeJSON(w, msg)
}

func (s *Server) declaresMainTool(body map[string]any) bool {
	tools, _ := body["tools"].([]any)
	for _, t := range tools {
		m, _ := t.(map[string]any)
		if name, _ := m["name"].(string); strings.HasPrefix(name, s.prefix) {
			return true
		}
	}
	return false
}

// message is the non-streaming response for blocks.
func message(blocks []Block) map[string]any {
	content := make([]any, len(blocks))
	stop := "end_turn"
	for i, b := range blocks {
		if b.Tool != "" {
			content[i] = map[string]any{"type": "tool_use", "id": b.ID, "name": b.Tool, "input": b.Input}
			stop = "tool_use"
		} else {
			content[i] = map[string]any{"type": "text", "text": b.Text}
		}
	}
	return map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-fake",
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 10}}
}

// writeStream sends msg as the Messages API's server-sent events.
func writeStream(w http.ResponseWriter, msg map[string]any, blocks []Block) {
	w.Header().Set("Content-Type", "text/event-stream")
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	event(w, "message_start", map[string]any{"type": "message_start", "message": start})
	for i, b := range blocks {
		if b.Tool != "" {
			input, _ := json.Marshal(b.Input)
			event(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b.ID, "name": b.Tool, "input": map[string]any{}}})
			event(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		} else {
			event(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			event(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "text_delta", "text": b.Text}})
		}
		event(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event(w, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": msg["stop_reason"], "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 10}})
	event(w, "message_stop", map[string]any{"type": "message_stop"})
}

func event(w http.ResponseWriter, name string, data any) {
	b, _ := json.Marshal(data)
	_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// Main returns the main loop's requests.
func (s *Server) Main() []Request { return s.Filter(func(r Request) bool { return r.Main }) }

// ToolNames lists the tools a request declared.
func (r Request) ToolNames() []string {
	tools, _ := r.Body["tools"].([]any)
	var out []string
	for _, t := range tools {
		m, _ := t.(map[string]any)
		if name, _ := m["name"].(string); name != "" {
			out = append(out, name)
		}
	}
	return out
}

// ToolResult is a tool_result block the client sent back.
type ToolResult struct {
	ID      string
	IsError bool
	// Text joins the result's text content.
	Text string
}

// ToolResult returns the tool_result block for the tool_use id anywhere in
// the request's messages (the client may merge consecutive user turns).
func (r Request) ToolResult(id string) (ToolResult, bool) {
	msgs, _ := r.Body["messages"].([]any)
	for _, msg := range msgs {
		m, _ := msg.(map[string]any)
		blocks, _ := m["content"].([]any)
		for _, b := range blocks {
			bm, _ := b.(map[string]any)
			if bm["type"] == "tool_result" && bm["tool_use_id"] == id {
				return toolResult(bm), true
			}
		}
	}
	return ToolResult{}, false
}

func toolResult(m map[string]any) ToolResult {
	tr := ToolResult{}
	tr.ID, _ = m["tool_use_id"].(string)
	tr.IsError, _ = m["is_error"].(bool)
	switch c := m["content"].(type) {
	case string:
		tr.Text = c
	case []any:
		var texts []string
		for _, x := range c {
			xm, _ := x.(map[string]any)
			if t, ok := xm["text"].(string); ok {
				texts = append(texts, t)
			}
		}
		tr.Text = strings.Join(texts, "\n")
	}
	return tr
}
