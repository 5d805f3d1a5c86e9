package stdio

import (
	"encoding/json"
	"io"
	"reflect"
	"sync"
	"sync/atomic"
)

// gate is the handshake state of one stdio connection. It opens when
// the answer to an initialize request goes out carrying a result: it is
// also the connection's writer, so it sees that answer without a hook of
// the server (shared by every transport).
type gate struct {
	open atomic.Bool
	mu   sync.Mutex // one Write at a time, so messages never interleave
	w    io.Writer
	// The initialize in flight: its id as encoding/json reads it (as mcp-go
	// echoes it) and the channel closed once it is answered.
	initID   any
	answered chan struct{}
	// pending are the requests passed on still to be answered.
	pending unanswered
}

func newGate(w io.Writer) *gate { return &gate{w: w} }

func (g *gate) opened() bool { return g.open.Load() }

// expect notes the initialize request with the given id and returns a
// channel closed when its answer has been written.
func (g *gate) expect(id []byte) <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.initID = nil
	_ = json.Unmarshal(id, &g.initID)
	g.answered = make(chan struct{})
	return g.answered
}

// Write writes one whole message (mcp-go and the filter write each in one
// call) and, before the handshake, watches for the answer to initialize.
func (g *gate) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	n, err := g.w.Write(p)
	g.pending.wrote(p)
	if g.answered != nil && !g.opened() {
		g.observe(p)
	}
	return n, err
}

// observe closes the wait if msg answers the initialize in flight, and
// opens the gate if that answer is a result.
func (g *gate) observe(msg []byte) {
	var r struct {
		ID     any             `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(msg, &r) != nil || r.ID == nil || !reflect.DeepEqual(r.ID, g.initID) {
		return
	}
	if len(r.Result) > 0 && string(r.Result) != "null" {
		g.open.Store(true)
	}
	close(g.answered)
	g.answered = nil
}
