package exec

import (
	"sync"
	"time"
)

// warmth boots the sandbox's pool (Set.Warm) only once the exec tools are
// offered to a client or called, and empties it after idle without either:
// a server whose clients cannot use the tools, or no longer do, keeps no
// sandbox booted (exec.warm_pool_idle).
type warmth struct {
	idle time.Duration
	// start boots the pool; stop empties it.
	start, stop func()
	mu          sync.Mutex
	on, closed  bool
	last        time.Time
	timer       *time.Timer
}

// touch boots the pool if it is empty and restarts the idle clock.
func (w *warmth) touch() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.last = time.Now()
	if !w.on {
		w.start()
		w.on = true
	}
	if w.timer == nil {
		w.timer = time.AfterFunc(w.idle, w.expire)
	} else {
		w.timer.Reset(w.idle)
	}
}

// expire empties the pool once idle has passed since the last touch.
func (w *warmth) expire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || !w.on {
		return
	}
	if left := w.idle - time.Since(w.last); left > 0 {
		w.timer.Reset(left) // touched while this call was on its way
		return
	}
	w.stop()
	w.on = false
}

// close stops the clock for good; the runner's Close removes the pool.
func (w *warmth) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
	}
}
