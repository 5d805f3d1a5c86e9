package guard

import (
	"time"

	"golang.org/x/time/rate"
)

// usage is what one identity has used: the counters Decide reads, and
// the token buckets behind its rate limits.
type usage struct {
	State
	// start is when the counters' window began (Limits.Window).
	start time.Time
	rate  *rate.Limiter
	tools map[string]*toolUsage
}

type toolUsage struct {
	ToolState
	rate *rate.Limiter
}

func newUsage(l Limits) *usage {
	u := &usage{tools: map[string]*toolUsage{}}
	if l.RatePerMinute > 0 {
		u.rate = newBucket(l.RatePerMinute, l.Burst)
	}
	for _, t := range l.Tools {
		tu := &toolUsage{}
		if t.RatePerMinute > 0 {
			tu.rate = newBucket(t.RatePerMinute, t.Burst)
		}
		u.tools[t.Glob] = tu
	}
	return u
}

func newBucket(perMinute float64, b int) *rate.Limiter {
	return rate.NewLimiter(rate.Limit(perMinute/60), burst(perMinute, b))
}

// expired reports whether the counters' window has ended at now (or
// never began).
func (u *usage) expired(now time.Time, window time.Duration) bool {
	return u.start.IsZero() || !now.Before(u.start.Add(window))
}

// roll starts a new window at now when the current one has ended: the
// counters start again from zero. The rate buckets are kept, as they
// refill by themselves.
func (u *usage) roll(now time.Time, window time.Duration) {
	if !u.expired(now, window) {
		return
	}
	u.State, u.start = State{}, now
	for _, tu := range u.tools {
		tu.ToolState = ToolState{}
	}
}

// snapshot is the usage as Decide sees it for a call at now, under the
// per-tool limits that apply to its tool.
func (u *usage) snapshot(applied []ToolLimits, now time.Time, window time.Duration) State {
	st := u.State
	st.Tools = nil
	st.WindowLeft = u.start.Add(window).Sub(now)
	if u.rate != nil {
		st.Tokens = u.rate.TokensAt(now)
	}
	for _, t := range applied {
		tu := u.tools[t.Glob]
		ts := tu.ToolState
		if tu.rate != nil {
			ts.Tokens = tu.rate.TokensAt(now)
		}
		if st.Tools == nil {
			st.Tools = map[string]ToolState{}
		}
		st.Tools[t.Glob] = ts
	}
	return st
}

// charge counts an admitted call.
func (u *usage) charge(applied []ToolLimits, bytes, cost int64, now time.Time) {
	u.Calls++
	u.BytesIn += bytes
	u.Spent += cost
	if u.rate != nil {
		u.rate.AllowN(now, 1)
	}
	for _, t := range applied {
		tu := u.tools[t.Glob]
		tu.Calls++
		tu.BytesIn += bytes
		if tu.rate != nil {
			tu.rate.AllowN(now, 1)
		}
	}
}

// chargeOutput counts the bytes a call returned.
func (u *usage) chargeOutput(applied []ToolLimits, n int64) {
	u.OutputBytes += n
	for _, t := range applied {
		u.tools[t.Glob].BytesOut += n
	}
}

// idle reports whether u is no different from a fresh usage at now: its
// window has ended and every rate bucket is full again. Forgetting it
// then changes no decision, and keeps the guard's memory bounded by the
// identities active within a window, not by every identity ever seen.
func (u *usage) idle(l Limits, now time.Time) bool {
	if !u.expired(now, l.window()) || !full(u.rate, now) {
		return false
	}
	for _, tu := range u.tools {
		if !full(tu.rate, now) {
			return false
		}
	}
	return true
}

func full(b *rate.Limiter, now time.Time) bool {
	return b == nil || b.TokensAt(now) >= float64(b.Burst())
}
