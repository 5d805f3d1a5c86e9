package guard

import (
	"fmt"
	"math"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/toolwarden/toolwarden/toolerr"
)

// Limits bound what one identity (an authenticated HTTP client, or the
// local client) may do. MaxCalls and MaxOutputBytes are required; the
// others are off when zero.
type Limits struct {
	MaxCalls       int
	MaxOutputBytes int64
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

// State is an identity's usage so far, as Decide sees it.
type State struct {
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

const limitHint = "Ask the operator to raise %s, or continue without this tool."

func checkLimits(in *input) Decision {
	l, st, call := in.limits, in.state, in.call
	if call.prepaid {
		return checkOutputLimits(l, st, call)
	}
	switch {
	case st.Calls >= l.MaxCalls:
		return limitDeny("limits.max_calls_per_session", toolerr.LimitExceeded,
			"Start a new session, or ask the operator to raise limits.max_calls_per_session.",
			"this session has made %d calls; the limit is %d", st.Calls, l.MaxCalls)
	case st.OutputBytes >= l.MaxOutputBytes:
		return limitDeny("limits.max_output_bytes_per_session", toolerr.LimitExceeded,
			"Start a new session, or ask the operator to raise limits.max_output_bytes_per_session.",
			"this session has received %d bytes of tool output; the limit is %d", st.OutputBytes, l.MaxOutputBytes)
	case l.MaxBytesIn > 0 && st.BytesIn+call.ArgBytes > l.MaxBytesIn:
		return limitDeny("limits.max_bytes_in_per_session", toolerr.LimitExceeded, fmt.Sprintf(limitHint, "limits.max_bytes_in_per_session"),
			"this call's %d bytes of arguments would bring the total to %d; the limit is %d", call.ArgBytes, st.BytesIn+call.ArgBytes, l.MaxBytesIn)
	case l.RatePerMinute > 0 && st.Tokens < 1:
		return rateDeny("limits.rate_per_minute", l.RatePerMinute, st.Tokens)
	}
	applied := l.applies(call.Tool)
	if c := cost(in.tool, applied); l.Budget > 0 && st.Spent+c > l.Budget {
		return limitDeny("limits.budget", toolerr.BudgetExceeded, fmt.Sprintf(limitHint, "limits.budget"),
			"this call costs %d and %d of the budget of %d is spent", c, st.Spent, l.Budget)
	}
	for _, t := range applied {
		if d, denied := checkToolLimits(t, st.Tools[t.Glob], call); denied {
			return d
		}
	}
	return pass("limits.within")
}

// checkOutputLimits checks only the limits a call does not charge when
// admitted, for a call that was charged when it asked for approval.
func checkOutputLimits(l Limits, st State, call Call) Decision {
	if st.OutputBytes >= l.MaxOutputBytes {
		return limitDeny("limits.max_output_bytes_per_session", toolerr.LimitExceeded,
			"Start a new session, or ask the operator to raise limits.max_output_bytes_per_session.",
			"this session has received %d bytes of tool output; the limit is %d", st.OutputBytes, l.MaxOutputBytes)
	}
	for _, t := range l.applies(call.Tool) {
		if ts := st.Tools[t.Glob]; t.MaxBytesOut > 0 && ts.BytesOut >= t.MaxBytesOut {
			key := "limits.tools." + t.Glob + ".max_bytes_out"
			return limitDeny(key, toolerr.LimitExceeded, fmt.Sprintf(limitHint, key),
				"tools matching %q have returned %d bytes; the limit is %d", t.Glob, ts.BytesOut, t.MaxBytesOut)
		}
	}
	return pass("limits.charged_when_asked")
}

func checkToolLimits(t ToolLimits, st ToolState, call Call) (Decision, bool) {
	key := "limits.tools." + t.Glob + "."
	switch {
	case t.MaxCalls > 0 && st.Calls >= t.MaxCalls:
		return limitDeny(key+"max_calls", toolerr.LimitExceeded, fmt.Sprintf(limitHint, key+"max_calls"),
			"%d calls to tools matching %q were made; the limit is %d", st.Calls, t.Glob, t.MaxCalls), true
	case t.MaxBytesIn > 0 && st.BytesIn+call.ArgBytes > t.MaxBytesIn:
		return limitDeny(key+"max_bytes_in", toolerr.LimitExceeded, fmt.Sprintf(limitHint, key+"max_bytes_in"),
			"this call's %d bytes of arguments would bring the total for tools matching %q to %d; the limit is %d",
			call.ArgBytes, t.Glob, st.BytesIn+call.ArgBytes, t.MaxBytesIn), true
	case t.MaxBytesOut > 0 && st.BytesOut >= t.MaxBytesOut:
		return limitDeny(key+"max_bytes_out", toolerr.LimitExceeded, fmt.Sprintf(limitHint, key+"max_bytes_out"),
			"tools matching %q have returned %d bytes; the limit is %d", t.Glob, st.BytesOut, t.MaxBytesOut), true
	case t.RatePerMinute > 0 && st.Tokens < 1:
		return rateDeny(key+"rate_per_minute", t.RatePerMinute, st.Tokens), true
	}
	return Decision{}, false
}

func rateDeny(rule string, perMinute, tokens float64) Decision {
	wait := math.Ceil((1 - tokens) * 60 / perMinute)
	return limitDeny(rule, toolerr.RateLimited,
		fmt.Sprintf("Wait about %.0f seconds before calling again, or ask the operator to raise %s.", wait, rule),
		"more than %g calls per minute (rule %s)", perMinute, rule)
}

func limitDeny(rule string, code toolerr.Code, hint, format string, args ...any) Decision {
	d := deny(rule, toolerr.New(code, hint, format, args...))
	d.Missing = rule
	return d
}
