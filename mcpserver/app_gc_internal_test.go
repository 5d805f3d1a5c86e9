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
