package artifacts

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// TestStoreDownAndBack stops a private MinIO mid-test: every tool answers
// backend.unavailable, promptly, and works again once MinIO is back.
func TestStoreDownAndBack(t *testing.T) {
	m := testenv.StartMinIO(t)
	m.Env(t)
	s := openFromEnv(t)
	task := newTask()
	_, err := s.store(ctxT(t), StoreIn{TaskID: task, Name: "before.txt", Content: "kept", Encoding: "text"})
	require.NoError(t, err)

	m.Stop()
	start := time.Now()
	_, err = s.store(ctxT(t), StoreIn{TaskID: task, Name: "during.txt", Content: "x", Encoding: "text"})
	te := requireCode(t, err, toolerr.BackendUnavailable)
	require.NotContains(t, te.Message, m.Endpoint, "the model is not told where the store is")
	_, err = s.retrieve(ctxT(t), RetrieveIn{TaskID: task, Name: "before.txt"})
	requireCode(t, err, toolerr.BackendUnavailable)
	_, err = s.list(ctxT(t), ListIn{TaskID: task})
	requireCode(t, err, toolerr.BackendUnavailable)
	require.Less(t, time.Since(start), 20*time.Second, "a down store fails calls quickly")
	require.ErrorIs(t, s.Probe(context.Background()), ErrUnreachable)

	m.Start(t)
	got, err := s.retrieve(ctxT(t), RetrieveIn{TaskID: task, Name: "before.txt"})
	require.NoError(t, err)
	require.Equal(t, "kept", got.Content)
	_, err = s.store(ctxT(t), StoreIn{TaskID: task, Name: "after.txt", Content: "y", Encoding: "text"})
	require.NoError(t, err)
}

// TestProbeRefusals: bad credentials and a missing bucket are reported as
// such, not as an unreachable store.
func TestProbeRefusals(t *testing.T) {
	m := testenv.StartMinIO(t)
	m.Env(t)
	t.Setenv("TOOLWARDEN_ARTIFACTS_SECRET_KEY", "wrong-secret-0123456789")
	s, err := Open(openLimits(t), discard)
	require.NoError(t, err)
	err = s.Probe(context.Background())
	require.Error(t, err)
	require.False(t, errors.Is(err, ErrUnreachable))
	require.Contains(t, err.Error(), "SignatureDoesNotMatch")
	require.NotContains(t, err.Error(), "wrong-secret")

	m.Env(t)
	t.Setenv("TOOLWARDEN_ARTIFACTS_BUCKET", "no-such-bucket")
	s, err = Open(openLimits(t), discard)
	require.NoError(t, err)
	require.ErrorContains(t, s.Probe(context.Background()), `bucket "no-such-bucket" does not exist`)

	m.Env(t)
	t.Setenv("TOOLWARDEN_ARTIFACTS_ACCESS_KEY", "")
	_, err = Open(openLimits(t), discard)
	require.ErrorContains(t, err, "TOOLWARDEN_ARTIFACTS_ACCESS_KEY")
}
