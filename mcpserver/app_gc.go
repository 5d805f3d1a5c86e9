package mcpserver

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
)

// ServerGCPercent is the garbage collector's target for a serving process
// whose operator did not set GOGC. Once the first call has built the
// output filter, its compiled secret rules keep ~6 MB live, so at Go's
// default of 100 the collector marks them again every ~6 MB allocated:
// every ~140 calls of a 4 KiB read, CPU per call and the slowest calls'
// latency. A bare server with <1 MiB live runs at Go's 4 MiB minimum
// heap, an effective ~400. 400 gives toolwarden the same; what it costs
// in resident memory at idle, the idle release (app_idle.go) returns
// (docs/benchmarks.md, "Garbage collection").
const ServerGCPercent = 400

// tuneGC sets ServerGCPercent unless GOGC is set, and returns the target
// in force for the start-up log: GOGC's value as given, or the default.
func tuneGC() string {
	if v, ok := os.LookupEnv("GOGC"); ok {
		return v
	}
	runtime.GC() // the next target counts from what is live, not from start-up's garbage
	debug.SetGCPercent(ServerGCPercent)
	return strconv.Itoa(ServerGCPercent)
}

// OneShotMemoryLimit bounds a one-shot command's heap, the collector
// being off (OneShotGC).
const OneShotMemoryLimit = 256 << 20

// OneShotGC turns the collector off for a one-shot command (tools,
// config check, policy explain), unless the operator set GOGC or
// GOMEMLIMIT: such a command allocates ~10 MB, keeps little of it and
// exits, and two collections of it (their mark workers run on the idle
// processor) were about a quarter of its CPU (docs/benchmarks.md, "Third
// increment"). OneShotMemoryLimit still bounds the heap: near it the
// collector runs as if on.
func OneShotGC() {
	if _, ok := os.LookupEnv("GOGC"); ok {
		return
	}
	if _, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(OneShotMemoryLimit)
}
