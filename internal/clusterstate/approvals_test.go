package clusterstate

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/approvals"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// hubs are the approval hubs of replicas a and b sharing one server.
func hubs(t *testing.T) (a, b *approvals.Hub) {
	r := testenv.NeedRedis(t)
	ca, cb := open(t, r), open(t, r)
	cb.prefix = ca.prefix
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, b = approvals.New(), approvals.New()
	ShareApprovals(ca, "a", a, log)
	ShareApprovals(cb, "b", b, log)
	time.Sleep(100 * time.Millisecond) // both subscribed
	return a, b
}

// TestDecisionOnAnotherReplica: a call waiting on replica a is listed,
// watched and decided on replica b, once; a decision for other
// arguments is refused.
func TestDecisionOnAnotherReplica(t *testing.T) {
	a, b := hubs(t)
	events, cancel := b.Subscribe()
	defer cancel()
	req := approvals.Request{ID: "req-1", Tool: "write_file", Digest: "d1", Preview: "Create file x",
		Created: time.Now(), Expires: time.Now().Add(time.Minute)}
	got := make(chan approvals.Decision, 1)
	go func() {
		d, err := a.Ask(context.Background(), req)
		require.NoError(t, err)
		got <- d
	}()
	select {
	case e := <-events:
		require.Equal(t, "pending", e.Kind)
		require.Equal(t, "req-1", e.Request.ID)
	case <-time.After(5 * time.Second):
		t.Fatal("b's watchers did not see a's waiting call")
	}
	require.Len(t, b.List(), 1)
	_, ok := b.Get("req-1")
	require.True(t, ok)
	require.ErrorIs(t, b.Decide("req-1", "other", approvals.Decision{Approve: true}), approvals.ErrDigest)
	require.NoError(t, b.Decide("req-1", "d1", approvals.Decision{Approve: true, Channel: "terminal", By: "terminal uid=0"}))
	select {
	case d := <-got:
		require.True(t, d.Approve)
		require.Equal(t, "terminal uid=0", d.By)
	case <-time.After(5 * time.Second):
		t.Fatal("the decision did not reach replica a")
	}
	err := b.Decide("req-1", "d1", approvals.Decision{Approve: true})
	require.True(t, errorsIsAny(err, approvals.ErrDecided, approvals.ErrUnknown), "a second decision is refused: %v", err)
	require.Eventually(t, func() bool { return len(b.List()) == 0 }, 5*time.Second, 20*time.Millisecond, "the call ended everywhere")
	require.ErrorIs(t, b.Decide("nope", "d1", approvals.Decision{}), approvals.ErrUnknown)
}

func errorsIsAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
