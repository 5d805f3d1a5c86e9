package mcpserver

import "sync/atomic"

// coalesced runs a function for each of many requests, one run at a
// time, and folds the requests that come while it runs into one more run:
// a hostile upstream that floods list_changed notifications costs one
// listing at a time and one waiting, not a goroutine and a listing per
// notification. Every request is followed by a run that starts after it.
type coalesced struct {
	pending atomic.Int32 // requests not yet covered by a run that started after them
}

// do runs f now unless a run is under way, which then runs f once more
// when it ends.
func (c *coalesced) do(f func()) {
	if c.pending.Add(1) > 1 {
		return // the run under way runs again for this request
	}
	for {
		f()
		if c.pending.Add(-1) == 0 {
			return
		}
		// Requests came during f: one more run covers them all.
		c.pending.Store(1)
	}
}
