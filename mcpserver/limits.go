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
		MaxCalls: l.MaxCallsPerSession, MaxOutputBytes: l.MaxOutputBytesPerSession, Window: l.Window,
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

// LimitScopes says, for each limit in force, what it is counted over:
// `config check` prints it, so that an operator need not guess whether a
// "per session" limit ever starts again (it does, every limits.window).
// The limits identities rules lower are listed too.
func LimitScopes(l configs.Limits, rules []configs.IdentityRule) map[string]string {
	window := "identity, per window of limits.window (" + GuardLimits(l).WindowOrDefault().String() + ")"
	bucket := "identity, token bucket refilling continuously"
	out := map[string]string{
		"limits.max_calls_per_session":        window,
		"limits.max_output_bytes_per_session": window,
		"limits.max_output_bytes_per_call":    "call",
		"limits.call_timeout":                 "call",
		"limits.max_abandoned":                "identity, calls still running",
	}
	set := func(key string, on bool, scope string) {
		if on {
			out[key] = scope
		}
	}
	set("limits.max_bytes_in_per_session", l.MaxBytesInPerSession > 0, window)
	set("limits.budget", l.Budget > 0, window)
	set("limits.rate_per_minute", l.RatePerMinute > 0, bucket)
	for glob, t := range l.Tools {
		key := "limits.tools." + glob + "."
		set(key+"max_calls", t.MaxCalls > 0, window)
		set(key+"max_bytes_in", t.MaxBytesIn > 0, window)
		set(key+"max_bytes_out", t.MaxBytesOut > 0, window)
		set(key+"rate_per_minute", t.RatePerMinute > 0, bucket)
		set(key+"timeout", t.Timeout > 0, "call")
	}
	for _, r := range rules {
		key, rl := "identities["+r.Name+"].limits.", r.Limits
		scope := "each identity the rule matches, per window of limits.window, with the base counters"
		set(key+"max_calls_per_session", rl.MaxCallsPerSession > 0, scope)
		set(key+"max_output_bytes_per_session", rl.MaxOutputBytesPerSession > 0, scope)
		set(key+"max_bytes_in_per_session", rl.MaxBytesInPerSession > 0, scope)
		set(key+"budget", rl.Budget > 0, scope)
	}
	return out
}
