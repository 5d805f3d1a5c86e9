package llmfake

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScriptHandsOutTurnsInOrderOnce(t *testing.T) {
	s := NewScript([]string{"a", "b"})
	for _, want := range []string{"a", "b"} {
		got, ok := s.Next()
		require.True(t, ok)
		require.Equal(t, want, got)
	}
	_, ok := s.Next()
	require.False(t, ok, "the script is over")
}

func TestRecorderKeepsEveryRequestOfConcurrentClients(t *testing.T) {
	var r Recorder[int]
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() { defer wg.Done(); r.Record(i) }()
	}
	wg.Wait()
	require.Len(t, r.Requests(), 50)
	require.Len(t, r.Filter(func(i int) bool { return i%2 == 0 }), 25)
	r.Problem("request %d: %s", 3, "past the end")
	require.Equal(t, []string{"request 3: past the end"}, r.Problems())
}

func TestReplyGivesSideRequestsTheirTextAndSaysWhenTheScriptIsOver(t *testing.T) {
	var r Recorder[int]
	s := NewScript([]string{"turn 1"})
	require.Equal(t, "side", s.Reply(false, "side", "over", r.Problem))
	require.Equal(t, "turn 1", s.Reply(true, "side", "over", r.Problem))
	require.Empty(t, r.Problems())
	require.Equal(t, "over", s.Reply(true, "side", "over", r.Problem))
	require.Equal(t, []string{"a main-loop request past the end of the script"}, r.Problems())
}
