// Package llmfake holds local stand-ins for the model APIs toolwarden's
// tests talk to, one package each: gemini (generateContent, for the
// bridge and Gemini CLI), anthropic (the Messages API, for Claude Code) and
// openai (the Responses API, for Codex CLI). Each replays a scripted
// conversation and records what the client sent; this package is what
// they share: the recorder of requests and of what went against the
// script.
package llmfake

import (
	"fmt"
	"slices"
	"sync"
)

// Recorder keeps the requests a fake received, of the fake's own request
// type R, and the problems it saw (unexpected paths, bodies that are not
// JSON, requests past the end of the script). It is safe for concurrent
// use; its zero value is ready.
type Recorder[R any] struct {
	mu       sync.Mutex
	requests []R
	problems []string
}

// Record adds a request and returns how many have been received.
func (r *Recorder[R]) Record(req R) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, req)
	return len(r.requests)
}

// Problem records what went against the script.
func (r *Recorder[R]) Problem(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

// Requests returns what the client sent so far.
func (r *Recorder[R]) Requests() []R {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.requests)
}

// Problems lists what went against the script so far.
func (r *Recorder[R]) Problems() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.problems)
}

// Filter returns the requests so far that keep says to keep.
func (r *Recorder[R]) Filter(keep func(R) bool) []R {
	var out []R
	for _, req := range r.Requests() {
		if keep(req) {
			out = append(out, req)
		}
	}
	return out
}

// Script hands out the turns scripted for a client's main loop, in order.
// Its zero value has none.
type Script[T any] struct {
	mu    sync.Mutex
	turns []T
}

// NewScript is a script of turns.
func NewScript[T any](turns []T) *Script[T] { return &Script[T]{turns: turns} }

// Next takes the next turn; false when the script is over.
func (s *Script[T]) Next() (T, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var t T
	if len(s.turns) == 0 {
		return t, false
	}
	t, s.turns = s.turns[0], s.turns[1:]
	return t, true
}

// Reply is the turn for a request: for the client's main loop the next
// scripted turn (over, with a problem recorded, once the script is over),
// for its other requests (titles, summaries) side.
func (s *Script[T]) Reply(main bool, side, over T, problem func(format string, args ...any)) T {
	if !main {
		return side
	}
	t, ok := s.Next()
	if !ok {
		problem("a main-loop request past the end of the script")
		return over
	}
	return t
}
