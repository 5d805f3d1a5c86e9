package mcpserver

import (
	"sort"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
)

// GuardLimits converts the config's limits into the guard's, per-tool
// entries sorted by glob so decisions are deterministic.
func GuardLimits(l configs.Limits) guard.Limits {
	out := guard.Limits{
		MaxCalls: l.MaxCallsPerSession, MaxOutputBytes: l.MaxOutputBytesPerSession,
		RatePerMinute: l.RatePerMinute, Burst: l.Burst, MaxBytesIn: l.MaxBytesInPerSession, Budget: l.Budget,
	}
	for glob, t := range l.Tools {
		out.Tools = append(out.Tools, guard.ToolLimits{
			Glob: glob, MaxCalls: t.MaxCalls, RatePerMinute: t.RatePerMinute, Burst: t.Burst,
			MaxBytesIn: t.MaxBytesIn, MaxBytesOut: t.MaxBytesOut, Cost: t.Cost, Timeout: t.Timeout,
		})
	}
	sort.Slice(out.Tools, func(i, j int) bool { return out.Tools[i].Glob < out.Tools[j].Glob })
	return out
}
