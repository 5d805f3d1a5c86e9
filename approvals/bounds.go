package approvals

import (
	"context"
	"fmt"
	"sync"
)

// Bounds caps the calls that may wait for a human at once. A waiting call
// holds its arguments until a human decides it or it expires, and nobody
// may be looking: without a cap one identity could fill the server's
// memory with calls nobody answers, and crowd every other identity's
// calls off the page.
type Bounds struct {
	// PerIdentity caps the calls of one identity; 0 is no cap.
	PerIdentity int
	// Total caps the calls of all identities together; 0 is no cap.
	Total int
}

// FullError refuses a call past the bounds.
type FullError struct {
	// Total is set when the cap on all identities was reached, not the
	// identity's own.
	Total bool
	// Limit is the cap reached.
	Limit int
}

func (e *FullError) Error() string {
	if e.Total {
		return fmt.Sprintf("approvals: %d calls already wait for a decision, the most that may wait at once", e.Limit)
	}
	return fmt.Sprintf("approvals: %d calls of this identity already wait for a decision, the most one identity may have waiting", e.Limit)
}

// Places counts the calls that wait for a human, per identity and in
// total, within Bounds. One Places can be shared by every way a call
// waits (the hub's channels and the client's elicitation form), so that
// the caps hold across them. The zero value has no bounds.
type Places struct {
	mu     sync.Mutex
	bounds Bounds
	taken  map[string]int
	total  int
}

// NewPlaces returns places within b.
func NewPlaces(b Bounds) *Places { return &Places{bounds: b} }

// SetBounds caps the calls that may wait from now on; the calls that
// already wait keep their places.
func (ps *Places) SetBounds(b Bounds) {
	ps.mu.Lock()
	ps.bounds = b
	ps.mu.Unlock()
}

// Place is one call's place among the calls that may wait, held from Take
// until Release. Taking it before the call's preview is built makes a call
// past the bounds cost nothing but its refusal.
type Place struct {
	ps       *Places
	h        *Hub // the hub AskThen waits in, if any
	identity string
	released bool // guarded by ps.mu
}

// Take reserves a place for a call of identity, or says which bound
// refuses it when identity, or all together, have as many as the bounds
// allow.
func (ps *Places) Take(identity string) (*Place, *FullError) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	switch {
	case ps.bounds.Total > 0 && ps.total >= ps.bounds.Total:
		return nil, &FullError{Total: true, Limit: ps.bounds.Total}
	case ps.bounds.PerIdentity > 0 && ps.taken[identity] >= ps.bounds.PerIdentity:
		return nil, &FullError{Limit: ps.bounds.PerIdentity}
	}
	if ps.taken == nil {
		ps.taken = map[string]int{}
	}
	ps.taken[identity]++
	ps.total++
	return &Place{ps: ps, identity: identity}, nil
}

// Release gives the place back; releasing it again does nothing.
func (p *Place) Release() {
	ps := p.ps
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if p.released {
		return
	}
	p.released = true
	ps.total--
	if ps.taken[p.identity]--; ps.taken[p.identity] == 0 {
		delete(ps.taken, p.identity)
	}
}

// SetBounds caps the calls that may wait in the hub from now on; the
// calls that already wait keep their places. Call it before serving calls.
func (h *Hub) SetBounds(b Bounds) { h.places().SetBounds(b) }

// SharePlaces makes the hub count its waiting calls in ps, shared with
// other ways of waiting. Call it before serving calls.
func (h *Hub) SharePlaces(ps *Places) {
	h.mu.Lock()
	h.placesOf = ps
	h.mu.Unlock()
}

func (h *Hub) places() *Places {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.placesOf
}

// Take reserves a place in the hub for a call of identity (Places.Take).
func (h *Hub) Take(identity string) (*Place, *FullError) {
	p, full := h.places().Take(identity)
	if p != nil {
		p.h = h
	}
	return p, full
}

// AskThen is Hub.AskThen in this place, which it releases when the call
// stops waiting, however it ends.
func (p *Place) AskThen(ctx context.Context, req Request, shown func()) (Decision, error) {
	defer p.Release()
	return p.h.askThen(ctx, req, shown)
}
