// Package openai is a local stand-in for the OpenAI Responses API
// (POST /v1/responses, streamed as server-sent events), the wire Codex CLI
// speaks to a configured model provider: it replays scripted turns to the
// client's main loop and records every request, so a test can drive Codex
// through tool calls and read what reached the model.
package openai

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/toolwarden/toolwarden/internal/llmfake"
)

// Item is one output item of a scripted turn: an assistant text, or a
// function call with its arguments (in a tool namespace, when the client
// declared its tools in one).
type Item struct {
	Text      string
	Namespace string
	Tool      string
	CallID    string
	Args      map[string]any
}

// Text is an assistant message.
func Text(s string) Item { return Item{Text: s} }

// Call is a function call of the tool name in namespace ("" for none).
func Call(callID, namespace, name string, args map[string]any) Item {
	return Item{Namespace: namespace, Tool: name, CallID: callID, Args: args}
}

// Request is one request the client sent.
type Request struct {
	Path string
	Body map[string]any
	// Main is true for requests that declare a tool whose name contains
	// the server's main-tool marker.
	Main bool
}

// Server is the fake endpoint.
type Server struct {
	*httptest.Server
	llmfake.Recorder[Request]
	marker string
	script *llmfake.Script[[]Item]
}

// New starts a fake whose main-loop requests (declaring a tool whose name
// contains marker, such as "toolwarden") get turns in order; other
// requests get a short text.
func New(marker string, turns ...[]Item) *Server {
	s := &Server{marker: marker, script: llmfake.NewScript(turns)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		s.Problem("unexpected %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	req := Request{Path: r.URL.Path}
	if err := json.Unmarshal(body, &req.Body); err != nil {
		s.Problem("request body is not JSON: %v", err)
	}
	req.Main = s.declaresMainTool(req.Body)
	n := s.Record(req)
	writeStream(w, fmt.Sprintf("resp_%d", n), s.script.Reply(req.Main, []Item{Text("ok")}, []Item{Text("the script is over")}, s.Problem))
}

func (s *Server) declaresMainTool(body map[string]any) bool {
	for _, name := range toolNames(body) {
		if strings.Contains(name, s.marker) {
			return true
		}
	}
	return false
}

// writeStream answers with the Responses API's events for items.
func writeStream(w http.ResponseWriter, id string, items []Item) {
	w.Header().Set("Content-Type", "text/event-stream")
	resp := map[string]any{"id": id, "object": "response", "status": "in_progress", "model": "fake", "output": []any{}}
	event(w, "response.created", map[string]any{"type": "response.created", "response": resp})
	var output []any
	for i, it := range items {
		var item map[string]any
		if it.Tool != "" {
			args, _ := json.Marshal(it.Args)
			item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%s_%d", id, i), "call_id": it.CallID,
				"name": it.Tool, "arguments": string(args), "status": "completed"}
			if it.Namespace != "" {
				item["namespace"] = it.Namespace
			}
		} else {
			item = map[string]any{"type": "message", "id": fmt.Sprintf("msg_%s_%d", id, i), "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": it.Text, "annotations": []any{}}}}
			event(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": i,
				"item": map[string]any{"type": "message", "id": item["id"], "role": "assistant", "status": "in_progress", "content": []any{}}})
			event(w, "response.output_text.delta", map[string]any{"type": "response.output_text.delta",
				"item_id": item["id"], "output_index": i, "content_index": 0, "delta": it.Text})
		}
		event(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i, "item": item})
		output = append(output, item)
	}
	resp["status"], resp["output"] = "completed", output
	resp["usage"] = map[string]any{"input_tokens": 10, "output_tokens": 10, "total_tokens": 20,
		"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}
	event(w, "response.completed", map[string]any{"type": "response.completed", "response": resp})
}

func event(w http.ResponseWriter, name string, data any) {
	b, _ := json.Marshal(data)
	_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// Main returns the main loop's requests.
func (s *Server) Main() []Request { return s.Filter(func(r Request) bool { return r.Main }) }

// ToolNames lists the function tools a request declared; a tool in a
// namespace tool (Codex declares each MCP server as one) is named
// namespace + "__" + name.
func (r Request) ToolNames() []string { return toolNames(r.Body) }

func toolNames(body map[string]any) []string {
	tools, _ := body["tools"].([]any)
	var out []string
	for _, t := range tools {
		m, _ := t.(map[string]any)
		name, _ := m["name"].(string)
		if m["type"] == "namespace" {
			for _, inner := range toolNames(m) {
				out = append(out, name+"__"+inner)
			}
		} else if name != "" {
			out = append(out, name)
		}
	}
	return out
}

// Output returns, as JSON text, the output the client sent for the
// function call callID (a string, or content parts).
func (r Request) Output(callID string) (string, bool) {
	input, _ := r.Body["input"].([]any)
	for _, it := range input {
		m, _ := it.(map[string]any)
		if m["type"] == "function_call_output" && m["call_id"] == callID {
			if s, ok := m["output"].(string); ok {
				return s, true
			}
			b, _ := json.Marshal(m["output"])
			return string(b), true
		}
	}
	return "", false
}
