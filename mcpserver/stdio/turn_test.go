package stdio

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTurnIsTakenOnce: a stdio call's turn runs one handler in place at a
// time: a call made from inside that handler, with its context, takes a
// handler goroutine (its stand-in would answer the wrong request); the
// turn is free again once the handler returned in time, and never after a
// stand-in answered the call.
func TestTurnIsTakenOnce(t *testing.T) {
	turn := &Turn{Context: context.Background()}
	got, ok := TurnOf(turn)
	require.True(t, ok)
	require.Same(t, turn, got)
	_, ok = TurnOf(context.WithValue(turn, turnKey{}, nil))
	require.False(t, ok, "a nil turn is none")
	type inner struct{}
	_, ok = TurnOf(context.WithValue(turn, inner{}, 1))
	require.False(t, ok, "a call from inside the handler runs on a handler goroutine")
	turn.Release()
	_, ok = TurnOf(turn)
	require.True(t, ok, "free again once the handler returned in time")
	turn.took.Store(true)
	turn.Release()
	_, ok = TurnOf(turn)
	require.False(t, ok, "never after a stand-in answered the call")
}
