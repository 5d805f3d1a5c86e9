package approvals

import "errors"

// Fleet shares the calls waiting in a hub with the hubs of the other
// replicas behind the same load balancer (clusterstate.Approvals, over
// Redis), so that the page or the terminal of any replica lists every
// replica's waiting calls and may decide them. The call itself waits on
// the replica that took it; only the decision travels.
type Fleet interface {
	// Share tells the other replicas that a request started (pending) or
	// stopped (done) waiting here.
	Share(Event)
	// Waiting lists the requests waiting on other replicas.
	Waiting() []Request
	// Decide settles a request waiting on another replica, with the same
	// checks and errors as Hub.Decide; it is accepted once fleet-wide.
	Decide(id, digest string, d Decision) error
}

// ErrFleet wraps the error of a fleet that cannot be reached.
var ErrFleet = errors.New("the other replicas' approvals cannot be reached")

// SetFleet shares this hub's waiting calls through f. Call it before
// serving calls.
func (h *Hub) SetFleet(f Fleet) {
	h.mu.Lock()
	h.fleet = f
	h.mu.Unlock()
}

// Remote tells this hub's watchers (page, terminal) of an event of
// another replica's hub.
func (h *Hub) Remote(e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, local := h.waiting[e.Request.ID]; !local {
		h.publish(e)
	}
}

// share passes e to the fleet, if any, outside h.mu.
func (h *Hub) share(e Event) {
	h.mu.Lock()
	f := h.fleet
	h.mu.Unlock()
	if f != nil {
		f.Share(e)
	}
}
