package clusterstate

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// TestTasksSharedAndBounded: a task stored through one client is read,
// updated and listed through another sharing the server, only under its
// identity; it expires with its TTL, which an update keeps; an update of
// a task that is gone does not bring it back.
func TestTasksSharedAndBounded(t *testing.T) {
	r := testenv.NeedRedis(t)
	ca, cb := open(t, r), open(t, r)
	cb.prefix = ca.prefix
	a, b := NewTasks(ca), NewTasks(cb)

	require.NoError(t, a.Create("t1", "alice", []byte(`{"v":1}`), time.Hour))
	require.NoError(t, a.Create("t2", "bob", []byte(`{"v":2}`), time.Hour))
	got, err := b.Get("t1")
	require.NoError(t, err)
	require.JSONEq(t, `{"v":1}`, string(got))

	require.NoError(t, b.Update("t1", []byte(`{"v":3}`)))
	got, err = a.Get("t1")
	require.NoError(t, err)
	require.JSONEq(t, `{"v":3}`, string(got))
	ttl, err := ca.rdb.PTTL(context.Background(), a.key("t1")).Result()
	require.NoError(t, err)
	require.Greater(t, ttl, 59*time.Minute, "an update keeps the task's expiry")

	list, err := b.List("alice")
	require.NoError(t, err)
	require.Len(t, list, 1, "alice sees her task only")
	n, err := b.Count("alice")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.JSONEq(t, `{"v":3}`, string(list[0]))

	// Gone (expired): no longer read, listed or updated back.
	require.NoError(t, ca.rdb.Del(context.Background(), a.key("t1")).Err())
	got, err = b.Get("t1")
	require.NoError(t, err)
	require.Nil(t, got)
	require.NoError(t, b.Update("t1", []byte(`{"v":4}`)))
	got, err = a.Get("t1")
	require.NoError(t, err)
	require.Nil(t, got, "an update does not bring back a task that expired")
	list, err = a.List("alice")
	require.NoError(t, err)
	require.Empty(t, list)
	n, err = a.Count("alice")
	require.NoError(t, err)
	require.Zero(t, n)
	n64, err := ca.rdb.ZCard(context.Background(), a.index("alice")).Result()
	require.NoError(t, err)
	require.Zero(t, n64, "List drops the expired member from the index")
}
