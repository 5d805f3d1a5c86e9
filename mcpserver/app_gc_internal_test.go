package mcpserver

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// gcPercent reads the collector's target without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestTuneGC(t *testing.T) {
	before := gcPercent()
	t.Cleanup(func() { debug.SetGCPercent(before) })

	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150)
	require.Equal(t, "150", tuneGC(), "GOGC is the operator's")
	require.Equal(t, 150, gcPercent())

	require.NoError(t, os.Unsetenv("GOGC")) // t.Setenv puts it back after
	require.Equal(t, "400", tuneGC())
	require.Equal(t, ServerGCPercent, gcPercent())
}

// TestOneShotGC: a one-shot command collects nothing unless its heap
// nears OneShotMemoryLimit; GOGC or GOMEMLIMIT set by the operator win.
func TestOneShotGC(t *testing.T) {
	before, limit := gcPercent(), debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(before); debug.SetMemoryLimit(limit) })

	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150)
	OneShotGC()
	require.Equal(t, 150, gcPercent(), "GOGC is the operator's")

	require.NoError(t, os.Unsetenv("GOGC"))
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 30)
	OneShotGC()
	require.Equal(t, 150, gcPercent(), "GOMEMLIMIT is the operator's")
	require.EqualValues(t, 1<<30, debug.SetMemoryLimit(-1))

	require.NoError(t, os.Unsetenv("GOMEMLIMIT"))
	OneShotGC()
	require.Equal(t, -1, gcPercent(), "no collection until the limit")
	require.EqualValues(t, OneShotMemoryLimit, debug.SetMemoryLimit(-1), "the heap is still bounded")
}
