package mcpserver

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/sandbox"
)

// poolRunner is a backend with a pool, recording the sizes asked.
type poolRunner struct {
	mu    sync.Mutex
	sizes []int
}

func (p *poolRunner) Run(context.Context, sandbox.Request) (sandbox.Result, error) {
	return sandbox.Result{Stdout: []byte("ran")}, nil
}
func (p *poolRunner) Name() string { return "pool" }
func (p *poolRunner) Warm(size int, _ ...sandbox.Request) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sizes = append(p.sizes, size)
	return nil
}
func (p *poolRunner) WarmStats() sandbox.WarmStats { return sandbox.WarmStats{} }

func (p *poolRunner) asked() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.sizes...)
}

// Detection starts at the first Warm or Run, not before; the pool asked
// for while it runs is the last one asked, applied once it ends.
func TestLaterRunnerDetectsAtFirstNeed(t *testing.T) {
	backend := &poolRunner{}
	release := make(chan struct{})
	detected := make(chan struct{}, 2)
	l := newLaterRunner(context.Background(), func(context.Context) (sandbox.Runner, error) {
		detected <- struct{}{}
		<-release
		return backend, nil
	}, func(sandbox.Runner) {})
	require.Empty(t, detected, "nothing is detected before a need")
	require.Equal(t, "none yet", l.Name())

	require.NoError(t, l.Warm(2))
	require.NoError(t, l.Warm(0))
	require.NoError(t, l.Warm(3))
	<-detected
	close(release)
	res, err := l.Run(context.Background(), sandbox.Request{})
	require.NoError(t, err)
	require.Equal(t, "ran", string(res.Stdout))
	require.Equal(t, "pool", l.Name())
	require.Eventually(t, func() bool { return len(backend.asked()) == 1 }, 30*time.Second, 5*time.Millisecond)
	require.Equal(t, []int{3}, backend.asked(), "only the last wish is applied")
	require.NoError(t, l.Warm(0))
	require.Equal(t, []int{3, 0}, backend.asked())
	require.Empty(t, detected, "detected once")
	require.NoError(t, l.Close())
}

// Without a working backend a run answers backend.unavailable, and the
// tools stay listed (the server detected nothing at start).
func TestLaterRunnerWithoutBackend(t *testing.T) {
	l := newLaterRunner(context.Background(), func(context.Context) (sandbox.Runner, error) {
		return nil, errors.New("no runsc, no bwrap")
	}, func(sandbox.Runner) { t.Error("ready without a backend") })
	_, err := l.Run(context.Background(), sandbox.Request{})
	e, ok := errors.AsType[*toolerr.Error](err)
	require.True(t, ok, "%v", err)
	require.Equal(t, toolerr.BackendUnavailable, e.Code)
	require.Contains(t, e.Message, "no runsc, no bwrap")
	require.NoError(t, l.Warm(2), "nothing to boot")
	require.NoError(t, l.Close())
}

// A closed runner that never detected starts nothing.
func TestLaterRunnerClosedUnused(t *testing.T) {
	l := newLaterRunner(context.Background(), func(context.Context) (sandbox.Runner, error) {
		t.Error("detected")
		return nil, errors.New("unreachable")
	}, func(sandbox.Runner) {})
	require.NoError(t, l.Close())
}
