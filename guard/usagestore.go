package guard

import (
	"sync"
	"time"

	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// UsageStore keeps what each identity has used. The guard's own keeps it
// in this process; several replicas behind a load balancer share one in
// Redis (package clusterstate), so that a limit holds fleet-wide.
type UsageStore interface {
	// Admit decides a call over its key's usage with decide and, when the
	// decision is Allow or NeedsApproval and the charge is not prepaid,
	// charges it; the decision and the charge are one step, so that two
	// concurrent calls cannot both take the last unit of a limit. An error
	// means the usage could not be read or charged: the guard denies.
	Admit(c Charge, decide func(State) Decision) (Decision, error)
	// ChargeOutput counts n bytes of output a call of key returned.
	ChargeOutput(key string, applied []ToolLimits, n int64) error
	// Peek is key's usage now, for a decision that charges nothing.
	Peek(key string, applied []ToolLimits) (State, error)
	// Forget drops the usage kept under key (a session that ended).
	Forget(key string)
}

// Charge is what admitting one call charges, and to whom.
type Charge struct {
	Key     string
	Applied []ToolLimits
	Bytes   int64
	Cost    int64
	// Prepaid is a call charged when it asked for approval: nothing is
	// charged again.
	Prepaid bool
}

// charges reports whether a decision charges the call: a call that waits
// for approval is counted too, since asking a human is not free and a
// declined call must not be retried without limit.
func charges(d Decision) bool { return d.Outcome == Allow || d.Outcome == NeedsApproval }

// memStore is the UsageStore of one process.
type memStore struct {
	limits Limits
	now    func() time.Time

	mu       sync.Mutex
	sessions map[string]*usage
	// swept is when idle usages were last forgotten (sweep).
	swept time.Time
}

func newMemStore(l Limits, now func() time.Time) *memStore {
	return &memStore{limits: l, now: now, sessions: map[string]*usage{}}
}

func (m *memStore) Admit(c Charge, decide func(State) Decision) (Decision, error) {
	u, st, now := m.begin(c)
	d := decide(st)
	m.end(u, c, d, now)
	return d, nil
}

// begin locks the store and returns c's usage and the state a decision
// reads; end charges the call if the decision does, and unlocks. The
// guard calls the pair itself, so that the call need not be captured by
// a closure that escapes (two allocations on the hot path).
func (m *memStore) begin(c Charge) (*usage, State, time.Time) {
	m.mu.Lock()
	now, window := m.now(), m.limits.window()
	m.sweep(now)
	u := m.session(c.Key)
	u.roll(now, window)
	return u, u.snapshot(c.Applied, now, window), now
}

func (m *memStore) end(u *usage, c Charge, d Decision, now time.Time) {
	if charges(d) && !c.Prepaid {
		u.charge(c.Applied, c.Bytes, c.Cost, now)
	}
	m.mu.Unlock()
}

func (m *memStore) ChargeOutput(key string, applied []ToolLimits, n int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.session(key)
	u.roll(m.now(), m.limits.window())
	u.chargeOutput(applied, n)
	return nil
}

func (m *memStore) Peek(key string, applied []ToolLimits) (State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now, window := m.now(), m.limits.window()
	u, ok := m.sessions[key]
	if !ok || u.expired(now, window) {
		u = newUsage(m.limits)
		u.start = now
	}
	return u.snapshot(applied, now, window), nil
}

func (m *memStore) Forget(key string) {
	m.mu.Lock()
	delete(m.sessions, key)
	m.mu.Unlock()
}

// session returns the usage of an identity (or session), creating it;
// m.mu must be held.
func (m *memStore) session(id string) *usage {
	u, ok := m.sessions[id]
	if !ok {
		u = newUsage(m.limits)
		m.sessions[id] = u
	}
	return u
}

// sweep forgets, at most once a window, the usages that are idle (see
// usage.idle); m.mu must be held.
func (m *memStore) sweep(now time.Time) {
	if now.Sub(m.swept) < m.limits.window() {
		return
	}
	m.swept = now
	for id, u := range m.sessions {
		if u.idle(m.limits, now) {
			delete(m.sessions, id)
		}
	}
}

// UnavailableError is the denial of a call whose limits could not be read
// or charged in the shared store: without them no call runs (fail closed).
// msg says what could not be done.
func UnavailableError(err error, msg string) *toolerr.Error {
	return toolerr.Wrap(err, toolerr.BackendUnavailable,
		"The shared limit store (cluster.redis_url) cannot be reached, so no call can be counted and none runs. "+
			"Retry in a few seconds; the operator must bring Redis/Valkey back (calls resume without a restart).",
		"%s: %v", msg, err).WithRule("cluster.redis")
}
