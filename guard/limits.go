package guard

import (
	"fmt"
	"math"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// Limits bound what one identity (an authenticated HTTP client, or the
// local client) may do. MaxCalls and MaxOutputBytes are required; the
// others are off when zero.
//
// The counted limits (calls, bytes, budget, and their per-tool forms) are
// counted per identity over Window: a window starts at the identity's
// first call and its counts start again when it ends. With the stateless
// protocol there is no session to end, so without a window one identity
// would be locked out for good once it reached a limit.
type Limits struct {
	MaxCalls       int
	MaxOutputBytes int64
	// Window is how long the counted limits are counted over; zero is
	// DefaultWindow.
	Window time.Duration
	// RatePerMinute and Burst shape a token bucket over all calls; Burst
	// zero means one minute's worth.
	RatePerMinute float64
	Burst         int
	// MaxBytesIn caps the total size of the arguments sent.
	MaxBytesIn int64
	// Budget caps the total cost spent (each call costs its tool's Cost).
	Budget int64
	// Tools are per-tool limits; every entry whose glob matches a tool
	// applies (the most restrictive wins). Tools matching one entry share
	// its counters.
	Tools []ToolLimits
}

// ToolLimits bound the calls to the tools matching Glob; zero is off.
type ToolLimits struct {
	Glob          string
	MaxCalls      int
	RatePerMinute float64
	Burst         int
	MaxBytesIn    int64
	MaxBytesOut   int64
	// Cost, when set, is what one call of these tools spends of the budget
	// (the highest of the tool's own cost and every matching entry's).
	Cost int64
	// Timeout, when set and shorter than the call timeout, bounds each call.
	Timeout time.Duration
}

// DefaultWindow is the window of the counted limits when none is set.
const DefaultWindow = time.Hour

// WindowOrDefault is the window the counted limits are counted over.
func (l Limits) WindowOrDefault() time.Duration { return l.window() }

// window is l.Window, or DefaultWindow when not set.
func (l Limits) window() time.Duration {
	if l.Window > 0 {
		return l.Window
	}
	return DefaultWindow
}

// State is an identity's usage in its current window, as Decide sees it.
type State struct {
	// WindowLeft is how long until the window's counts start again.
	WindowLeft  time.Duration
	Calls       int
	OutputBytes int64
	BytesIn     int64
	Spent       int64
	// Tokens are the rate bucket's tokens now (read only when a rate is set).
	Tokens float64
	// Tools holds the usage of the per-tool limits, by glob.
	Tools map[string]ToolState
}

// ToolState is the usage counted under one per-tool limit.
type ToolState struct {
	Calls             int
	BytesIn, BytesOut int64
	Tokens            float64
}

// applies returns the per-tool limits that match tool.
func (l Limits) applies(tool string) []ToolLimits {
	var out []ToolLimits
	for _, t := range l.Tools {
		if doublestar.ValidatePattern(t.Glob) && nameMatch(t.Glob, tool) {
			out = append(out, t)
		}
	}
	return out
}

// cost is what one call of tool spends, under the limits that apply to it.
func cost(tool *ToolInfo, applied []ToolLimits) int64 {
	c := tool.Cost
	for _, t := range applied {
		c = max(c, t.Cost)
	}
	return c
}

// burst is the bucket size of a rate.
func burst(perMinute float64, b int) int {
	if b > 0 {
		return b
	}
	return max(1, int(math.Ceil(perMinute)))
}

func checkLimits(in *input) Decision {
	l, st, call := in.limits, in.state, in.call
	if call.prepaid {
		return checkOutputLimits(l, st, call)
	}
	switch {
	case st.Calls >= l.MaxCalls:
		return windowDeny("limits.max_calls_per_session", toolerr.LimitExceeded, l, st,
			"this identity has made %d calls in the current window of %s; the limit is %d", st.Calls, l.window(), l.MaxCalls)
	case st.OutputBytes >= l.MaxOutputBytes:
		return outputDeny(l, st)
	case l.MaxBytesIn > 0 && st.BytesIn+call.ArgBytes > l.MaxBytesIn:
		return windowDeny("limits.max_bytes_in_per_session", toolerr.LimitExceeded, l, st,
			"this call's %d bytes of arguments would bring the total of the current window to %d; the limit is %d", call.ArgBytes, st.BytesIn+call.ArgBytes, l.MaxBytesIn)
	case l.RatePerMinute > 0 && st.Tokens < 1:
		return rateDeny("limits.rate_per_minute", l.RatePerMinute, st.Tokens)
	}
	applied := l.applies(call.Tool)
	if c := cost(in.tool, applied); l.Budget > 0 && st.Spent+c > l.Budget {
		return windowDeny("limits.budget", toolerr.BudgetExceeded, l, st,
			"this call costs %d and %d of the budget of %d is spent in the current window", c, st.Spent, l.Budget)
	}
	for _, t := range applied {
		if d, denied := checkToolLimits(t, l, st, call); denied {
			return d
		}
	}
	return pass("limits.within")
}

func outputDeny(l Limits, st State) Decision {
	return windowDeny("limits.max_output_bytes_per_session", toolerr.LimitExceeded, l, st,
		"this identity has received %d bytes of tool output in the current window of %s; the limit is %d", st.OutputBytes, l.window(), l.MaxOutputBytes)
}

// checkOutputLimits checks only the limits a call does not charge when
// admitted, for a call that was charged when it asked for approval.
func checkOutputLimits(l Limits, st State, call Call) Decision {
	if st.OutputBytes >= l.MaxOutputBytes {
		return outputDeny(l, st)
	}
	for _, t := range l.applies(call.Tool) {
		if ts := st.Tools[t.Glob]; t.MaxBytesOut > 0 && ts.BytesOut >= t.MaxBytesOut {
			return windowDeny("limits.tools."+t.Glob+".max_bytes_out", toolerr.LimitExceeded, l, st,
				"tools matching %q have returned %d bytes in the current window; the limit is %d", t.Glob, ts.BytesOut, t.MaxBytesOut)
		}
	}
	return pass("limits.charged_when_asked")
}

func checkToolLimits(t ToolLimits, l Limits, all State, call Call) (Decision, bool) {
	key, st := "limits.tools."+t.Glob+".", all.Tools[t.Glob]
	switch {
	case t.MaxCalls > 0 && st.Calls >= t.MaxCalls:
		return windowDeny(key+"max_calls", toolerr.LimitExceeded, l, all,
			"%d calls to tools matching %q were made in the current window; the limit is %d", st.Calls, t.Glob, t.MaxCalls), true
	case t.MaxBytesIn > 0 && st.BytesIn+call.ArgBytes > t.MaxBytesIn:
		return windowDeny(key+"max_bytes_in", toolerr.LimitExceeded, l, all,
			"this call's %d bytes of arguments would bring the total for tools matching %q to %d in the current window; the limit is %d",
			call.ArgBytes, t.Glob, st.BytesIn+call.ArgBytes, t.MaxBytesIn), true
	case t.MaxBytesOut > 0 && st.BytesOut >= t.MaxBytesOut:
		return windowDeny(key+"max_bytes_out", toolerr.LimitExceeded, l, all,
			"tools matching %q have returned %d bytes in the current window; the limit is %d", t.Glob, st.BytesOut, t.MaxBytesOut), true
	case t.RatePerMinute > 0 && st.Tokens < 1:
		return rateDeny(key+"rate_per_minute", t.RatePerMinute, st.Tokens), true
	}
	return Decision{}, false
}

func rateDeny(rule string, perMinute, tokens float64) Decision {
	wait := int(math.Ceil((1 - tokens) * 60 / perMinute))
	d := limitDeny(rule, toolerr.RateLimited,
		fmt.Sprintf("Wait about %d seconds before calling again, or ask the operator to raise %s.", wait, rule),
		"more than %g calls per minute (rule %s)", perMinute, rule)
	d.Err.RetryAfter = max(1, wait)
	return d
}

// windowDeny refuses a call over a counted limit until the identity's
// window ends, saying when that is.
func windowDeny(rule string, code toolerr.Code, l Limits, st State, format string, args ...any) Decision {
	wait := max(1, int(math.Ceil(st.WindowLeft.Seconds())))
	d := limitDeny(rule, code,
		fmt.Sprintf("Wait %d seconds: the counts of limits.window (%s) start again then. Or ask the operator to raise %s.", wait, l.window(), rule),
		format, args...)
	d.Err.RetryAfter = wait
	return d
}

func limitDeny(rule string, code toolerr.Code, hint, format string, args ...any) Decision {
	d := deny(rule, toolerr.New(code, hint, format, args...))
	d.Missing = rule
	return d
}
