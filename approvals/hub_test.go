package approvals

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func request(id string, ttl time.Duration) Request {
	now := time.Now()
	return Request{ID: id, Tool: "write_file", Digest: "d-" + id, Session: "s", Preview: "Create file a.txt", Created: now, Expires: now.Add(ttl)}
}

// ask runs Ask in the background once the request is visible.
func ask(t *testing.T, h *Hub, ctx context.Context, req Request) <-chan error {
	t.Helper()
	res := make(chan error, 1)
	go func() {
		d, err := h.Ask(ctx, req)
		if err == nil && !d.Approve {
			err = errors.New("denied: " + d.Reason)
		}
		res <- err
	}()
	require.Eventually(t, func() bool { _, ok := h.Get(req.ID); return ok }, 5*time.Second, time.Millisecond)
	return res
}

func TestDecideApprovesOnlyTheNamedCall(t *testing.T) {
	h := New()
	a, b := request("a", time.Minute), request("b", time.Minute)
	ra, rb := ask(t, h, context.Background(), a), ask(t, h, context.Background(), b)
	require.Len(t, h.List(), 2)

	require.ErrorIs(t, h.Decide("a", b.Digest, Decision{Approve: true}), ErrDigest, "b's digest cannot approve a")
	require.ErrorIs(t, h.Decide("zzz", a.Digest, Decision{Approve: true}), ErrUnknown)
	require.NoError(t, h.Decide("a", a.Digest, Decision{Approve: true, By: "page"}))
	require.NoError(t, <-ra)
	require.ErrorIs(t, h.Decide("a", a.Digest, Decision{Approve: true}), ErrUnknown, "a decision for a call that ended is refused")

	require.NoError(t, h.Decide("b", b.Digest, Decision{Reason: "no"}))
	require.EqualError(t, <-rb, "denied: no")
	require.Empty(t, h.List())
}

func TestDecideIsSingleUse(t *testing.T) {
	h := New()
	h.now = func() time.Time { return time.Now() }
	a := request("a", time.Minute)
	w := &waiter{req: a, decided: make(chan Decision, 1)}
	h.waiting["a"] = w
	require.NoError(t, h.Decide("a", a.Digest, Decision{Approve: true}))
	require.ErrorIs(t, h.Decide("a", a.Digest, Decision{Approve: false}), ErrDecided)
}

func TestAskEnds(t *testing.T) {
	h := New()
	t.Run("expires", func(t *testing.T) {
		_, err := h.Ask(context.Background(), request("x", 20*time.Millisecond))
		require.ErrorIs(t, err, ErrTimeout)
		require.ErrorIs(t, h.Decide("x", "d-x", Decision{Approve: true}), ErrUnknown)
	})
	t.Run("expired but still listed is refused", func(t *testing.T) {
		h2 := New()
		r := request("y", time.Minute)
		h2.waiting["y"] = &waiter{req: r, decided: make(chan Decision, 1)}
		h2.now = func() time.Time { return r.Expires }
		require.ErrorIs(t, h2.Decide("y", r.Digest, Decision{Approve: true}), ErrExpired)
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		res := ask(t, h, ctx, request("c", time.Minute))
		cancel()
		require.ErrorIs(t, <-res, context.Canceled)
		require.ErrorIs(t, h.Decide("c", "d-c", Decision{Approve: true}), ErrUnknown)
	})
}

func TestSubscribeSeesPendingAndDone(t *testing.T) {
	h := New()
	events, cancel := h.Subscribe()
	defer cancel()
	r := request("e", time.Minute)
	res := ask(t, h, context.Background(), r)
	require.Equal(t, Event{Kind: "pending", Request: r}, <-events)
	require.NoError(t, h.Decide("e", r.Digest, Decision{Approve: true}))
	require.NoError(t, <-res)
	require.Equal(t, "done", (<-events).Kind)
}

func TestSlowWatcherIsDropped(t *testing.T) {
	h := New()
	events, cancel := h.Subscribe()
	defer cancel()
	for i := 0; i < 100; i++ {
		h.mu.Lock()
		h.publish(Event{Kind: "pending"})
		h.mu.Unlock()
	}
	n := 0
	for range events {
		n++
	}
	require.Equal(t, 64, n, "the buffered events, then the channel closes")
}

// fill makes n calls of identity wait in h and returns their requests.
func fill(t *testing.T, h *Hub, ctx context.Context, identity string, n int) []Request {
	t.Helper()
	var reqs []Request
	for i := range n {
		r := request(identity+"-"+string(rune('a'+i)), time.Minute)
		r.Identity = identity
		ask(t, h, ctx, r)
		reqs = append(reqs, r)
	}
	return reqs
}

// TestBoundsPerIdentityAndTotal: an identity at its cap is refused at
// once while another still gets its own places, up to the total; a place
// comes back when its call ends by decision, timeout or cancel.
func TestBoundsPerIdentityAndTotal(t *testing.T) {
	h := New()
	h.SetBounds(Bounds{PerIdentity: 2, Total: 3})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	alice := fill(t, h, ctx, "alice", 2)

	over := request("alice-over", time.Minute)
	over.Identity = "alice"
	_, err := h.Ask(ctx, over)
	var full *FullError
	require.ErrorAs(t, err, &full)
	require.Equal(t, FullError{Limit: 2}, *full, "alice's own cap")
	_, ok := h.Get(over.ID)
	require.False(t, ok, "a refused call never waits")

	fill(t, h, ctx, "bob", 1)
	_, full = h.Take("carol")
	require.Equal(t, &FullError{Total: true, Limit: 3}, full, "the total cap")

	require.NoError(t, h.Decide(alice[0].ID, alice[0].Digest, Decision{Approve: true}))
	require.Eventually(t, func() bool {
		p, full := h.Take("carol")
		if full != nil {
			return false
		}
		p.Release()
		return true
	}, 5*time.Second, time.Millisecond, "a decision frees its place")

	short := request("carol-short", 10*time.Millisecond)
	short.Identity = "carol"
	_, err = h.Ask(ctx, short)
	require.ErrorIs(t, err, ErrTimeout)
	p, full := h.Take("carol")
	require.Nil(t, full, "a timeout frees its place")

	p.Release()
	p.Release() // a second release gives nothing back twice
	_, full = h.Take("dave")
	require.Nil(t, full)
	_, full = h.Take("erin")
	require.NotNil(t, full, "the double release did not free a second place")

	cancel()
	require.Eventually(t, func() bool { return len(h.List()) == 0 }, 5*time.Second, time.Millisecond)
	ps := h.places()
	ps.mu.Lock()
	defer ps.mu.Unlock()
	require.Equal(t, 1, ps.total, "cancelled calls freed theirs: only dave's place is held")
	require.Equal(t, map[string]int{"dave": 1}, ps.taken)
}
