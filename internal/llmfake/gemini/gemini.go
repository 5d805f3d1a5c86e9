// Package gemini is a local stand-in for the Gemini generateContent
// endpoint: it replays a scripted conversation and records what the
// client sent, so tests can check both sides of the exchange.
package gemini

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/toolwarden/toolwarden/internal/llmfake"
)

// Turn is one scripted reply. With Status 0 or 200 the reply is a model
// turn made of Parts; otherwise an API error with that status. A Repeat
// turn is never used up. A Hang turn never answers: it waits until the
// client gives up on the request.
type Turn struct {
	Status int
	Header map[string]string
	Parts  []map[string]any
	Repeat bool
	Hang   bool
	// FinishReason replaces STOP; with no Parts the candidate has no content.
	FinishReason string
	// Usage is the response's usageMetadata (promptTokenCount,
	// candidatesTokenCount, cachedContentTokenCount, thoughtsTokenCount);
	// nil sends none.
	Usage map[string]any
}

// Request is what the client sent.
type Request struct {
	Path   string
	APIKey string
	Body   map[string]any
}

// Server is the fake endpoint.
type Server struct {
	*httptest.Server
	llmfake.Recorder[Request] // generateContent requests
	// Counts records the countTokens requests, which take no turn.
	Counts llmfake.Recorder[Request]
	mu     sync.Mutex // guards turns and count
	turns  []Turn
	count  func(Request) int
	side   func(Request) (Turn, bool)
}

// AnswerSide answers the requests side picks (a client's summary or title
// requests) with the turn it returns, without taking a scripted turn.
func (s *Server) AnswerSide(side func(Request) (Turn, bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.side = side
}

// New starts a fake that replies with turns, in order.
func New(turns ...Turn) *Server {
	s := &Server{turns: turns}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// Usage is a usageMetadata: prompt (cached included), cached, candidates
// and thoughts token counts.
func Usage(prompt, cached, candidates, thoughts int) map[string]any {
	return map[string]any{"promptTokenCount": prompt, "cachedContentTokenCount": cached, "candidatesTokenCount": candidates,
		"thoughtsTokenCount": thoughts, "totalTokenCount": prompt + candidates + thoughts}
}

// CountWith makes countTokens answer count(request) instead of the
// default, a token per four bytes of the request's contents as JSON.
func (s *Server) CountWith(count func(Request) int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count = count
}

// countTokens answers a countTokens request.
func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Path: r.URL.Path, APIKey: r.Header.Get("x-goog-api-key")}
	if err := json.Unmarshal(body, &req.Body); err != nil {
		s.Problem("countTokens: body is not JSON: %v", err)
	}
	s.Counts.Record(req)
	s.mu.Lock()
	count := s.count
	s.mu.Unlock()
	n := 0
	if count != nil {
		n = count(req)
	} else {
		b, _ := json.Marshal(req.Body["contents"])
		n = (len(b) + 3) / 4
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"totalTokens": n})
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, ":countTokens") {
		s.countTokens(w, r)
		return
	}
	if t := s.reply(w, r); t.Hang {
		<-r.Context().Done()
	}
}

// reply records the request and writes the next scripted turn, unless it
// hangs; it returns the turn.
func (s *Server) reply(w http.ResponseWriter, r *http.Request) Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	req := Request{Path: r.URL.Path, APIKey: r.Header.Get("x-goog-api-key")}
	err := json.Unmarshal(body, &req.Body)
	n := s.Record(req)
	if err != nil {
		s.Problem("request %d: body is not JSON: %v", n, err)
	}
	stream := strings.HasSuffix(r.URL.Path, ":streamGenerateContent")
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, ":generateContent") && !stream {
		s.Problem("unexpected %s %s", r.Method, r.URL.Path)
	}
	t, sideTurn := Turn{}, false
	if s.side != nil {
		t, sideTurn = s.side(req)
	}
	if !sideTurn && len(s.turns) == 0 {
		s.Problem("request %d: the script is over", n)
		writeError(w, http.StatusBadRequest, "the fake's script is over")
		return Turn{}
	}
	if !sideTurn {
		t = s.turns[0]
		if !t.Repeat {
			s.turns = s.turns[1:]
		}
	}
	if t.Hang {
		return t
	}
	for k, v := range t.Header {
		w.Header().Set(k, v)
	}
	if t.Status != 0 && t.Status != http.StatusOK {
		writeError(w, t.Status, http.StatusText(t.Status))
		return t
	}
	candidate := map[string]any{"finishReason": "STOP"}
	if t.FinishReason != "" {
		candidate["finishReason"] = t.FinishReason
	}
	if t.Parts != nil {
		candidate["content"] = map[string]any{"role": "model", "parts": t.Parts}
	}
	resp := map[string]any{"candidates": []any{candidate}}
	if t.Usage != nil {
		resp["usageMetadata"] = t.Usage
	}
	if stream {
		writeStream(w, resp)
		return t
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
	return t
}

// writeStream answers a streamGenerateContent request (Gemini CLI's main
// loop uses it, with alt=sse) as one server-sent event holding the whole
// response.
func writeStream(w http.ResponseWriter, resp map[string]any) {
	data, _ := json.Marshal(resp)
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = fmt.Fprintf(w, "data: %s\r\n\r\n", data)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": status, "message": msg, "status": "ERROR"}})
}

// Left is the number of scripted turns not yet used.
func (s *Server) Left() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, t := range s.turns {
		if !t.Repeat {
			n++
		}
	}
	return n
}

// Text is a text part.
func Text(s string) map[string]any { return map[string]any{"text": s} }

// Call is a function-call part.
func Call(id, name string, args map[string]any) map[string]any {
	fc := map[string]any{"name": name, "args": args}
	if id != "" {
		fc["id"] = id
	}
	return map[string]any{"functionCall": fc}
}

// Reply is a 200 turn with the given parts.
func Reply(parts ...map[string]any) Turn { return Turn{Parts: parts} }

// Contents returns a request's contents.
func (r Request) Contents() []map[string]any {
	list, _ := r.Body["contents"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, c := range list {
		m, _ := c.(map[string]any)
		out = append(out, m)
	}
	return out
}

// FunctionResponses returns the function responses in the request's last
// content, in order.
func (r Request) FunctionResponses() []map[string]any {
	contents := r.Contents()
	if len(contents) == 0 {
		return nil
	}
	parts, _ := contents[len(contents)-1]["parts"].([]any)
	var out []map[string]any
	for _, p := range parts {
		pm, _ := p.(map[string]any)
		if fr, ok := pm["functionResponse"].(map[string]any); ok {
			out = append(out, fr)
		}
	}
	return out
}

// LastText returns the text of the request's last content.
func (r Request) LastText() string {
	contents := r.Contents()
	if len(contents) == 0 {
		return ""
	}
	parts, _ := contents[len(contents)-1]["parts"].([]any)
	var b strings.Builder
	for _, p := range parts {
		pm, _ := p.(map[string]any)
		if t, ok := pm["text"].(string); ok {
			b.WriteString(t)
		}
	}
	return b.String()
}
