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

// The goroutine of a call whose reading was handed over then waits to
// take the reading over at the next hand-over (awaitReading), one such
// goroutine at a time: a new goroutine would grow its stack again for
// the next call it serves where it read it (each call of 1-10 ms cost
// ~280 us more CPU, most of it copying stacks, with mcp-server-git's
// git_status as an upstream).

// handOverAfter is how long a call served where it was read holds the
// reading back (a variable for tests).
var handOverAfter = time.Millisecond

// readersStarted counts the goroutines started to go on reading (tests
// check that a waiting one is reused).
var readersStarted atomic.Int64

// reading is what a call served where it was read asks of the reading
// loop: to go on elsewhere.
type reading interface {
	handOverReading()
}

// servedHere is a call served where it was read.
type servedHere struct {
	reading reading
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
func (c *toolCalls) serveHere(req json.RawMessage, id jsontext.Value, r reading) bool {
	h := &servedHere{reading: r}
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

// handOver has the reading go on on another goroutine, unless the call
// was answered first or the reading was handed over already.
func (h *servedHere) handOver() {
	if h.state.CompareAndSwap(running, handedOver) {
		h.reading.handOverReading()
	}
}

// handOverReading has the goroutine waiting to read again (awaitReading)
// go on reading, or else a new one.
func (f *lineFilter) handOverReading() {
	if w := f.waiter.Swap(nil); w != nil {
		close(*w)
		return
	}
	readersStarted.Add(1)
	go f.read()
}

// awaitReading has this goroutine, whose call served where it was read
// has been answered with the reading gone on elsewhere, wait to take the
// reading over at the next hand-over, and reports whether it did: not
// when another goroutine waits already, the input has ended, or the
// session has. A hand-over that came as it gave up is taken.
func (f *lineFilter) awaitReading() bool {
	ch := make(chan struct{})
	if !f.waiter.CompareAndSwap(nil, &ch) {
		return false
	}
	select {
	case <-ch:
		return true
	case <-f.readingEnded:
	case <-f.ended:
	}
	if f.waiter.CompareAndSwap(&ch, nil) {
		return false
	}
	<-ch // a hand-over took this goroutine first
	return true
}
