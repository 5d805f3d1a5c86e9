package mcpserver

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// At ServerGCPercent the heap may grow to five times what is live before
// a cycle, and Go's scavenger returns only what is above that goal: a
// server that has gone quiet keeps its last calls' (and its start-up's)
// garbage resident until the next call, ~40 MB at idle for ~17 MB live.
// So a serving process watches its own allocation and, once it has gone
// quiet after allocating enough to matter, collects and returns the free
// pages to the operating system (debug.FreeOSMemory), and unmaps the
// pages of its executable that start-up touched (releaseBinaryPages). A
// busy server never pays for it: a quiet interval allocates less than
// idleQuiet.
const (
	// idleCheck is how often the allocation counter is read.
	idleCheck = 5 * time.Second
	// idleQuiet is the most an interval may allocate and still be idle
	// (a 4 KiB read allocates ~44 KB: a few calls per interval).
	idleQuiet = 1 << 20
	// idleWorth is how much must have been allocated since the last
	// release for another to be worth a collection.
	idleWorth = 4 << 20
)

// idleRelease decides, interval by interval, when to release memory.
type idleRelease struct {
	// allocs reads the bytes allocated since the process started.
	allocs func() uint64
	// release collects and returns free memory to the system.
	release func()
	// last is the count at the previous check, released at the
	// previous release.
	last, released uint64
}

func newIdleRelease(allocs func() uint64, release func()) *idleRelease {
	n := allocs()
	return &idleRelease{allocs: allocs, release: release, last: n}
}

// check reads the counter once; it releases, and reports so, when the
// interval since the last check was quiet and enough was allocated since
// the last release.
func (r *idleRelease) check() bool {
	n := r.allocs()
	quiet := n-r.last < idleQuiet
	r.last = n
	if !quiet || n-r.released < idleWorth {
		return false
	}
	r.release()
	r.released = r.allocs()
	r.last = r.released
	return true
}

// releaseWhenIdle runs r's checks every interval until ctx ends.
func releaseWhenIdle(ctx context.Context, r *idleRelease, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.check()
		}
	}
}

// heapAllocs reads the runtime's count of bytes allocated on the heap.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// startIdleRelease starts the process's idle release for the life of ctx.
func startIdleRelease(ctx context.Context) {
	go releaseWhenIdle(ctx, newIdleRelease(heapAllocs, releaseMemory), idleCheck)
}

// releaseMemory returns the heap's free pages to the operating system and
// unmaps the executable's clean pages (app_idle_linux.go). The second is
// best effort: if it fails they stay mapped, as they were.
func releaseMemory() {
	debug.FreeOSMemory()
	_, _ = releaseBinaryPages()
}
