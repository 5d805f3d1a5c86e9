package exec

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The pool is booted when the tools are offered or a run comes, emptied
// after exec.warm_pool_idle without either, and booted again by the next.
func TestWarmPoolEmptiesWhenIdle(t *testing.T) {
	cfg := testConfig(t)
	cfg.WarmPoolIdle = 20 * time.Millisecond
	w := &fakeWarmer{}
	s := New(cfg, "/ws").Bind(w, Toolchain{})
	defer s.Close()
	_, err := s.KeepWarm(func(err error) { t.Error(err) })
	require.NoError(t, err)
	size, boots, _ := w.counts()
	require.Zero(t, boots, "nothing is booted at start")
	require.Zero(t, size)

	s.Offered()
	size, boots, _ = w.counts()
	require.Equal(t, []int{cfg.WarmPool, 1}, []int{size, boots})
	emptied := func() bool { size, _, empties := w.counts(); return size == 0 && empties == 1 }
	require.Eventually(t, emptied, 30*time.Second, 5*time.Millisecond, "emptied once idle")

	// A run boots it again, without a tools/list first.
	req, err := s.commandRequest(cfg.Commands[0], RunCommandIn{Command: "git_diff"})
	require.NoError(t, err)
	_, err = s.run(context.Background(), req)
	require.NoError(t, err)
	size, boots, _ = w.counts()
	require.Equal(t, []int{cfg.WarmPool, 2}, []int{size, boots})
	require.Eventually(t, func() bool { _, _, empties := w.counts(); return empties == 2 }, 30*time.Second, 5*time.Millisecond)
}

// A pool in use is not emptied, and a closed Set boots nothing more.
func TestWarmPoolKeptWhileUsed(t *testing.T) {
	cfg := testConfig(t)
	cfg.WarmPoolIdle = time.Hour
	w := &fakeWarmer{}
	s := New(cfg, "/ws").Bind(w, Toolchain{})
	_, err := s.KeepWarm(func(err error) { t.Error(err) })
	require.NoError(t, err)
	for range 3 {
		s.Offered()
	}
	size, boots, empties := w.counts()
	require.Equal(t, []int{cfg.WarmPool, 1, 0}, []int{size, boots, empties}, "booted once, never emptied within the idle time")
	require.NoError(t, s.Close())
	s.Offered()
	_, boots, _ = w.counts()
	require.Equal(t, 1, boots, "nothing is booted once closed")
}
