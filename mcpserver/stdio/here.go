package stdio

import (
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// A call served by a worker is handed from the reading goroutine to the
// worker's: the scheduler wakes another thread for it, then the reader
// parks, at every call (with a lean client, stdio p50 5% and CPU 10%
// above serving it where it was read: docs/benchmarks.md). So a call
// that comes while no other is being served is served on the reading
// goroutine itself. Nothing is read meanwhile: should the call take
// longer than handOverAfter (a cancellation, another request, the
// client's answer to an elicitation may be waiting), or should its
// stand-in answer it at its deadline, the reading goes on on a new
// goroutine, and the call's goroutine ends once its call is answered.

// handOverAfter is how long a call served where it was read holds the
// reading back.
const handOverAfter = time.Millisecond

// servedHere is a call served where it was read.
type servedHere struct {
	readOn func() // the reading loop, to go on with on a new goroutine
	// state is running, then done (answered, the reading still here) or
	// handedOver (the reading went on elsewhere), whichever comes first.
	state atomic.Int32
}

const (
	running int32 = iota
	done
	handedOver
)

// serveHere serves the call, counted in c.serving and c.here, on this,
// the reading goroutine, and reports whether the reading was handed over
// meanwhile (this goroutine must then stop reading).
func (c *toolCalls) serveHere(req json.RawMessage, id jsontext.Value, readOn func()) bool {
	h := &servedHere{readOn: readOn}
	timer := time.AfterFunc(handOverAfter, h.handOver)
	turn := &Turn{Context: c.ctx, calls: c, id: id, here: h}
	c.answer(turn, req)
	timer.Stop()
	if !turn.took.Load() { // else its stand-in counted it answered
		c.serving.Add(-1)
		c.here.Done()
	}
	return !h.state.CompareAndSwap(running, done)
}

// handOver has the reading go on on a new goroutine, unless the call was
// answered first or the reading was handed over already.
func (h *servedHere) handOver() {
	if h.state.CompareAndSwap(running, handedOver) {
		go h.readOn()
	}
}
