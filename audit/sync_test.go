package audit

import (
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSyncAlwaysSharesOneFsync: while an fsync runs, writes that arrive
// wait for it and then share a single next fsync; none returns before an
// fsync that began after its write.
func TestSyncAlwaysSharesOneFsync(t *testing.T) {
	var calls atomic.Int64
	entered := make(chan struct{}, 2)
	gate := make(chan struct{}, 2)
	s := newSyncer(SyncAlways, 0, func() error {
		calls.Add(1)
		entered <- struct{}{}
		<-gate
		return nil
	}, slog.New(slog.DiscardHandler))
	defer s.stop()

	first := make(chan error)
	n := s.wrote()
	go func() { first <- s.wait(n) }()
	<-entered // the first fsync is running and covers write 1 only

	const late = 10
	var wrote, done sync.WaitGroup
	var returned atomic.Int64
	for range late {
		wrote.Add(1)
		done.Go(func() {
			m := s.wrote()
			wrote.Done()
			if err := s.wait(m); err != nil {
				t.Error(err)
			}
			returned.Add(1)
		})
	}
	wrote.Wait()
	gate <- struct{}{}
	require.NoError(t, <-first)
	<-entered // one of the late writers runs the second fsync
	require.Zero(t, returned.Load(), "no late write returns on the fsync that began before it")
	gate <- struct{}{}
	done.Wait()
	require.Equal(t, int64(2), calls.Load(), "ten late writes share one fsync")
}

func TestSyncAlwaysReturnsTheFsyncError(t *testing.T) {
	boom := errors.New("EIO")
	s := newSyncer(SyncAlways, 0, func() error { return boom }, slog.New(slog.DiscardHandler))
	defer s.stop()
	require.ErrorIs(t, s.wait(s.wrote()), boom)
}

func TestSyncIntervalFsyncsInTheBackground(t *testing.T) {
	synced := make(chan struct{}, 10)
	s := newSyncer(SyncInterval, 5*time.Millisecond, func() error { synced <- struct{}{}; return nil }, slog.New(slog.DiscardHandler))
	s.wrote()
	<-synced // blocks until the ticker fsyncs; the test timeout bounds it
	s.stop()
	require.Empty(t, synced, "nothing new written, no further fsync")
}

func TestSyncNoneNeverFsyncs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a := openRotating(t, path, Options{Sync: SyncNone, MaxBytes: 4096})
	a.sync.fsync = func() error { t.Error("fsync with sync none"); return nil }
	for i := range 20 {
		require.NoError(t, a.Append(testEntry(i)))
	}
	require.NoError(t, a.Close())
}

func TestAuditAppendWithSyncAlways(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a := openRotating(t, path, Options{Sync: SyncAlways})
	var calls atomic.Int64
	fsync := a.sync.fsync
	a.sync.fsync = func() error { calls.Add(1); return fsync() }
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 10 {
				if err := a.Append(testEntry(g*10 + i)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	require.LessOrEqual(t, calls.Load(), int64(80))
	require.Positive(t, calls.Load())
	res, err := verifyLines(readLines(t, path))
	require.NoError(t, err)
	require.Equal(t, 80, res.Lines)
}
