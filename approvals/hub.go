// Package approvals holds the calls that wait for a human's approval on a
// channel the client does not control (the approval page, the terminal
// approver over the control socket), and settles each one with the first
// valid decision. A decision names the call by its approval ID and the
// digest of its arguments, is accepted once, only while the call still
// waits and before it expires: it can never approve another call, a call
// that already ended, or the same call twice.
package approvals

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"
)

// Request is a call waiting for a decision, as the channels show it.
type Request struct {
	// ID is the approval request's name (the audit lines' "approval").
	ID       string `json:"id"`
	Tool     string `json:"tool"`
	Digest   string `json:"args_sha256"`
	Identity string `json:"identity,omitempty"`
	Session  string `json:"session"`
	// Preview is the exact action, as elicitation would show it.
	Preview string    `json:"preview"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
}

// Decision is a human's answer.
type Decision struct {
	Approve bool
	// Channel is where the human answered: "page" or "terminal".
	Channel string
	// By names who answered, on which channel, for the audit line:
	// "page", "terminal uid=1000".
	By string
	// Reason is a denial's reason, shown to the model.
	Reason string
}

// Event tells a watcher that a request started or stopped waiting.
type Event struct {
	// Kind is "pending" or "done".
	Kind    string  `json:"kind"`
	Request Request `json:"request"`
}

// Errors of Decide. Each names why a decision was refused.
var (
	ErrUnknown = errors.New("no call waits under this approval ID (it was never asked, or it already ended)")
	ErrExpired = errors.New("the approval request expired")
	ErrDigest  = errors.New("the decision is for other arguments than the waiting call's")
	ErrDecided = errors.New("the call was already decided")
	// ErrTimeout is Ask's error when nobody decided before the request
	// expired.
	ErrTimeout = errors.New("nobody decided before the approval request expired")
)

// Hub is the set of waiting calls. The zero value is not usable; see New.
type Hub struct {
	now func() time.Time

	mu      sync.Mutex
	waiting map[string]*waiter
	// placesOf counts the waiting calls within their bounds (see Take).
	placesOf *Places
	subs     map[chan Event]struct{}
	linker   func(Request) string
	// fleet, when set, shares the waiting calls with other replicas.
	fleet Fleet
}

type waiter struct {
	req     Request
	decided chan Decision // buffered 1: the single decision
	done    bool
}

// New returns an empty hub.
func New() *Hub {
	return &Hub{now: time.Now, waiting: map[string]*waiter{}, subs: map[chan Event]struct{}{},
		placesOf: &Places{}}
}

// Ask shows req on every channel and waits until one decides it, it
// expires (ErrTimeout), or ctx ends (ctx.Err()). The request stops waiting
// whatever the outcome, so a later decision for it is refused. A request
// past the hub's bounds is refused at once with a *FullError.
func (h *Hub) Ask(ctx context.Context, req Request) (Decision, error) {
	return h.AskThen(ctx, req, nil)
}

// AskThen is Ask calling shown, when not nil, once req can be decided:
// what offers req elsewhere (a link sent to the client) starts there, so
// that an answer to the offer finds req waiting.
func (h *Hub) AskThen(ctx context.Context, req Request, shown func()) (Decision, error) {
	p, full := h.Take(req.Identity)
	if full != nil {
		return Decision{}, full
	}
	return p.AskThen(ctx, req, shown)
}

// askThen is Place.AskThen: req waits in the hub.
func (h *Hub) askThen(ctx context.Context, req Request, shown func()) (Decision, error) {
	w := &waiter{req: req, decided: make(chan Decision, 1)}
	h.mu.Lock()
	if _, dup := h.waiting[req.ID]; dup {
		h.mu.Unlock()
		return Decision{}, errors.New("approvals: duplicate approval ID " + req.ID)
	}
	h.waiting[req.ID] = w
	h.publish(Event{Kind: "pending", Request: req})
	h.mu.Unlock()
	h.share(Event{Kind: "pending", Request: req})
	defer h.end(w)
	if shown != nil {
		shown()
	}
	timer := time.NewTimer(req.Expires.Sub(h.now()))
	defer timer.Stop()
	select {
	case d := <-w.decided:
		return d, nil
	case <-timer.C:
		return Decision{}, ErrTimeout
	case <-ctx.Done():
		return Decision{}, ctx.Err()
	}
}

// end removes a request that no longer waits and tells the watchers.
func (h *Hub) end(w *waiter) {
	h.mu.Lock()
	w.done = true
	delete(h.waiting, w.req.ID)
	h.publish(Event{Kind: "done", Request: w.req})
	h.mu.Unlock()
	h.share(Event{Kind: "done", Request: w.req})
}

// Decide settles the waiting call named id whose arguments have digest,
// here or, through the fleet, on the replica where it waits.
func (h *Hub) Decide(id, digest string, d Decision) error {
	h.mu.Lock()
	_, ok := h.waiting[id]
	f := h.fleet
	h.mu.Unlock()
	if !ok && f != nil {
		return f.Decide(id, digest, d)
	}
	return h.decideHere(id, digest, d)
}

// decideHere settles a call waiting in this hub.
func (h *Hub) decideHere(id, digest string, d Decision) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	w, ok := h.waiting[id]
	switch {
	case !ok || w.done:
		return ErrUnknown
	case w.req.Digest != digest:
		return ErrDigest
	case !h.now().Before(w.req.Expires):
		return ErrExpired
	}
	select {
	case w.decided <- d:
		return nil
	default:
		return ErrDecided
	}
}

// SetLinker registers how to link to one waiting call: the approval
// page's per-call URL, which URL-mode elicitation sends the client.
func (h *Hub) SetLinker(f func(Request) string) {
	h.mu.Lock()
	h.linker = f
	h.mu.Unlock()
}

// Link returns the URL that shows only r, or "" without a page.
func (h *Hub) Link(r Request) string {
	h.mu.Lock()
	f := h.linker
	h.mu.Unlock()
	if f == nil {
		return ""
	}
	return f(r)
}

// Get returns the waiting request named id, here or on another replica.
func (h *Hub) Get(id string) (Request, bool) {
	h.mu.Lock()
	w, ok := h.waiting[id]
	h.mu.Unlock()
	if ok {
		return w.req, true
	}
	for _, r := range h.List() {
		if r.ID == id {
			return r, true
		}
	}
	return Request{}, false
}

// List returns the waiting requests, here and on the other replicas,
// oldest first.
func (h *Hub) List() []Request {
	h.mu.Lock()
	out := make([]Request, 0, len(h.waiting))
	for _, w := range h.waiting {
		out = append(out, w.req)
	}
	f := h.fleet
	h.mu.Unlock()
	if f != nil {
		out = append(out, f.Waiting()...)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Subscribe returns the events from now on; cancel stops them. A watcher
// that does not keep up is dropped (its channel closes) rather than
// slowing the calls or silently missing one; it can subscribe and List
// again.
func (h *Hub) Subscribe() (events <-chan Event, cancel func()) {
	ch := make(chan Event, 64)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := h.subs[ch]; ok {
			delete(h.subs, ch)
			close(ch)
		}
	}
}

// publish sends e to every watcher without blocking; h.mu is held.
func (h *Hub) publish(e Event) {
	for ch := range h.subs {
		select {
		case ch <- e:
		default:
			delete(h.subs, ch)
			close(ch)
		}
	}
}
