package mcpserver

import (
	"context"
	"testing"
	"time"
)

// TestIdleReleaseWhenQuiet walks idleRelease through a server's life: it
// releases once the start-up's allocation has gone quiet, never while calls
// allocate, again after a busy spell ends, and not twice for nothing.
// Without the release, a quiet server keeps its garbage at GC percent 400.
func TestIdleReleaseWhenQuiet(t *testing.T) {
	var n uint64
	releases := 0
	r := newIdleRelease(func() uint64 { return n }, func() { releases++ })
	steps := []struct {
		name    string
		alloc   uint64
		release bool
	}{
		{"start-up allocates", 30 << 20, false},
		{"quiet after start-up", 0, true},
		{"still quiet, nothing new", 0, false},
		{"busy", 8 << 20, false},
		{"busy again", 8 << 20, false},
		{"quiet after busy", 100 << 10, true},
		{"a few calls, not worth it", 500 << 10, false},
		{"a few more, still under idleWorth", 500 << 10, false},
	}
	for _, s := range steps {
		n += s.alloc
		if got := r.check(); got != s.release {
			t.Fatalf("%s: released %v, want %v", s.name, got, s.release)
		}
	}
	if releases != 2 {
		t.Fatalf("released %d times, want 2", releases)
	}
}

// TestIdleReleaseFrees runs the real release over the runtime's counter:
// garbage made, then a quiet interval, and the loop returns it.
func TestIdleReleaseFrees(t *testing.T) {
	done := make(chan struct{}, 1)
	r := newIdleRelease(heapAllocs, func() { done <- struct{}{} })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sink := make([][]byte, 0, 64)
	for range 64 {
		sink = append(sink, make([]byte, 128<<10))
	}
	_ = sink
	go releaseWhenIdle(ctx, r, 10*time.Millisecond)
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("no release within a minute of quiet")
	}
}
