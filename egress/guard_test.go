package egress

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// TestGuardHoldsBackAPartialMatch: read a byte at a time, a needle split
// over many reads trips the guard before any of its bytes is passed on,
// and a stream without it passes whole.
func TestGuardHoldsBackAPartialMatch(t *testing.T) {
	hit := errors.New("hit")
	g := newGuard(iotest.OneByteReader(strings.NewReader("abcTOOLWARDEN_Xdef")), []string{"TOOLWARDEN_X"}, hit)
	got, err := io.ReadAll(g)
	require.ErrorIs(t, err, hit)
	require.Equal(t, "abc", string(got))
	require.True(t, g.tripped)

	clean := strings.Repeat("TOOLWARDEN_ ", 10000)
	g = newGuard(iotest.HalfReader(strings.NewReader(clean)), []string{"TOOLWARDEN_X"}, hit)
	got, err = io.ReadAll(g)
	require.NoError(t, err)
	require.Equal(t, clean, string(got))
}
