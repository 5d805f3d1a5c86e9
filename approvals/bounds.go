package approvals

import (
	"context"
	"fmt"
)

// Bounds caps the calls that may wait in a hub at once. A waiting call
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

// FullError refuses a call past the hub's bounds.
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

// SetBounds caps the calls that may wait from now on; the calls that
// already wait keep their places. Call it before serving calls.
func (h *Hub) SetBounds(b Bounds) {
	h.mu.Lock()
	h.bounds = b
	h.mu.Unlock()
}

// Place is one call's place among the calls that may wait in the hub,
// held from Take until Release. Taking it before the call's preview is
// built makes a call past the bounds cost nothing but its refusal.
type Place struct {
	h        *Hub
	identity string
	released bool // guarded by h.mu
}

// Take reserves a place for a call of identity, or says which bound
// refuses it when identity, or the hub, has as many as its bounds allow.
func (h *Hub) Take(identity string) (*Place, *FullError) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.bounds.Total > 0 && h.total >= h.bounds.Total:
		return nil, &FullError{Total: true, Limit: h.bounds.Total}
	case h.bounds.PerIdentity > 0 && h.taken[identity] >= h.bounds.PerIdentity:
		return nil, &FullError{Limit: h.bounds.PerIdentity}
	}
	h.taken[identity]++
	h.total++
	return &Place{h: h, identity: identity}, nil
}

// Release gives the place back; releasing it again does nothing.
func (p *Place) Release() {
	h := p.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if p.released {
		return
	}
	p.released = true
	h.total--
	if h.taken[p.identity]--; h.taken[p.identity] == 0 {
		delete(h.taken, p.identity)
	}
}

// AskThen is Hub.AskThen in this place, which it releases when the call
// stops waiting, however it ends.
func (p *Place) AskThen(ctx context.Context, req Request, shown func()) (Decision, error) {
	defer p.Release()
	return p.h.askThen(ctx, req, shown)
}
