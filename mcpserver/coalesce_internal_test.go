package mcpserver

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A flood of requests while a run is under way costs one more run, and
// every request is followed by a run that started after it.
func TestCoalesced(t *testing.T) {
	var c coalesced
	var runs, seen atomic.Int32
	var requested atomic.Int32
	started, release := make(chan struct{}), make(chan struct{})
	first := true
	f := func() {
		runs.Add(1)
		seen.Store(requested.Load())
		if first {
			first = false
			close(started)
			<-release
		}
	}
	var wg sync.WaitGroup
	requested.Add(1)
	wg.Go(func() { c.do(f) })
	<-started
	for range 100 {
		requested.Add(1)
		wg.Go(func() { c.do(f) })
	}
	require.Eventually(t, func() bool { return c.pending.Load() == 101 }, time.Minute, time.Millisecond,
		"all 100 requested during the first run")
	close(release)
	wg.Wait()
	require.Equal(t, int32(2), runs.Load(), "the first run and one more for the 100 that came during it")
	require.Equal(t, int32(101), seen.Load(), "the last run started after every request")
}
