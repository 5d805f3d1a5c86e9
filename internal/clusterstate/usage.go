package clusterstate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/toolwarden/toolwarden/guard"
)

// Usage is a guard.UsageStore shared by every replica that uses the same
// server and prefix. The window counters are charged before the decision
// and refunded when the guard denies, so that the check and the charge
// are one atomic step across replicas; the rate buckets are
// redis_rate's GCRA, also checked and taken in one step.
//
// One difference from the memory store: a call the guard denies for
// another reason (its arguments, say) still spends a token of the rate
// bucket, as redis_rate cannot give one back. That errs on the closed side.
type Usage struct {
	c      *Client
	limits guard.Limits
	rates  *rates
}

// NewUsage is the shared store of the identities' usage under limits.
func NewUsage(c *Client, limits guard.Limits) *Usage {
	return &Usage{c: c, limits: limits, rates: newRates(c)}
}

// Admit implements guard.UsageStore.
func (u *Usage) Admit(c guard.Charge, decide func(guard.State) guard.Decision) (guard.Decision, error) {
	deltas := []any{}
	if !c.Prepaid {
		deltas = callDeltas(c)
	}
	after, err := u.run(c.Key, deltas)
	if err != nil {
		return guard.Decision{}, err
	}
	st := after.minus(c, !c.Prepaid)
	if !c.Prepaid {
		if err := u.rates.take(c.Key, u.limits, c.Applied, &st); err != nil {
			u.refund(c.Key, deltas)
			return guard.Decision{}, err
		}
	}
	d := decide(st)
	if !c.Prepaid && d.Outcome != guard.Allow && d.Outcome != guard.NeedsApproval {
		if err := u.refund(c.Key, deltas); err != nil {
			return guard.Decision{}, err
		}
	}
	return d, nil
}

// ChargeOutput implements guard.UsageStore.
func (u *Usage) ChargeOutput(key string, applied []guard.ToolLimits, n int64) error {
	deltas := []any{fieldOut, n}
	for _, t := range applied {
		deltas = append(deltas, toolField(t.Glob, fieldOut), n)
	}
	_, err := u.run(key, deltas)
	return err
}

// Peek implements guard.UsageStore: the counters and the rate buckets'
// tokens now, taking nothing.
func (u *Usage) Peek(key string, applied []guard.ToolLimits) (guard.State, error) {
	after, err := u.run(key, nil)
	if err != nil {
		return guard.State{}, err
	}
	st := after.minus(guard.Charge{Applied: applied}, false)
	return st, u.rates.peek(key, u.limits, applied, &st)
}

// Forget implements guard.UsageStore. Usage shared by replicas outlives a
// session on one of them: it ends with its window.
func (u *Usage) Forget(string) {}

// run charges deltas (none: reads) to key's hash and returns the counters.
func (u *Usage) run(key string, deltas []any) (counters, error) {
	ctx, cancel := op()
	defer cancel()
	args := append([]any{u.limits.WindowOrDefault().Milliseconds()}, deltas...)
	v, err := chargeScript.Run(ctx, u.c.rdb, []string{u.c.key("u", key)}, args...).Slice()
	if err != nil {
		return counters{}, fmt.Errorf("redis: %w", err)
	}
	return parseCounters(v, u.limits.WindowOrDefault())
}

// refund takes back deltas charged to a call that was then denied.
func (u *Usage) refund(key string, deltas []any) error {
	if len(deltas) == 0 {
		return nil
	}
	ctx, cancel := op()
	defer cancel()
	if err := refundScript.Run(ctx, u.c.rdb, []string{u.c.key("u", key)}, deltas...).Err(); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	return nil
}

// key names an identity's entry of kind; the identity is hashed, so that
// any name makes a short key of plain characters.
func (c *Client) key(kind, id string) string {
	sum := sha256.Sum256([]byte(id))
	return c.prefix + kind + ":" + hex.EncodeToString(sum[:12])
}

// The usage hash's fields: calls, bytes in, budget spent, bytes out.
const (
	fieldCalls = "c"
	fieldIn    = "i"
	fieldSpent = "s"
	fieldOut   = "o"
)

func toolField(glob, f string) string { return "t:" + f + ":" + glob }

// callDeltas is what admitting a call adds to the counters.
func callDeltas(c guard.Charge) []any {
	d := []any{fieldCalls, 1, fieldIn, c.Bytes, fieldSpent, c.Cost}
	for _, t := range c.Applied {
		d = append(d, toolField(t.Glob, fieldCalls), 1, toolField(t.Glob, fieldIn), c.Bytes)
	}
	return d
}

// counters are the hash's values after a charge.
type counters struct {
	left time.Duration
	vals map[string]int64
}

func parseCounters(v []any, window time.Duration) (counters, error) {
	if len(v) != 2 {
		return counters{}, fmt.Errorf("redis: unexpected reply %v", v)
	}
	ms, _ := v[0].(int64)
	flat, _ := v[1].([]any)
	c := counters{left: time.Duration(ms) * time.Millisecond, vals: make(map[string]int64, len(flat)/2)}
	if ms < 0 {
		c.left = window // no window yet: a fresh one would start now
	}
	for i := 0; i+1 < len(flat); i += 2 {
		k, _ := flat[i].(string)
		s, _ := flat[i+1].(string)
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return counters{}, fmt.Errorf("redis: counter %q is %q", k, s)
		}
		c.vals[k] = n
	}
	return c, nil
}

// minus is the state before this call's charge (when charged), as the
// guard decides over it.
func (c counters) minus(ch guard.Charge, charged bool) guard.State {
	var one, bytes, cost int64
	if charged {
		one, bytes, cost = 1, ch.Bytes, ch.Cost
	}
	st := guard.State{WindowLeft: c.left, Calls: int(c.vals[fieldCalls] - one), BytesIn: c.vals[fieldIn] - bytes,
		Spent: c.vals[fieldSpent] - cost, OutputBytes: c.vals[fieldOut]}
	for _, t := range ch.Applied {
		if st.Tools == nil {
			st.Tools = map[string]guard.ToolState{}
		}
		st.Tools[t.Glob] = guard.ToolState{Calls: int(c.vals[toolField(t.Glob, fieldCalls)] - one),
			BytesIn: c.vals[toolField(t.Glob, fieldIn)] - bytes, BytesOut: c.vals[toolField(t.Glob, fieldOut)]}
	}
	return st
}
