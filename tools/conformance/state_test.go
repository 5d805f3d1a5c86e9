package conformance

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStateRoundTrips(t *testing.T) {
	for _, round := range []int{1, 2} {
		got, err := checkState("tool_a", signState("tool_a", round))
		require.NoError(t, err)
		assert.Equal(t, round, got)
	}
	got, err := checkState("tool_a", "")
	require.NoError(t, err)
	assert.Zero(t, got, "no state is the first round")
	assert.NotEqual(t, signState("tool_a", 1), signState("tool_a", 2), "each round's state differs")
}

// A client cannot alter, forge or move a state: each is refused with an
// error that says what to send instead.
func TestStateAttacks(t *testing.T) {
	good := signState("tool_a", 1)
	payload, sig, _ := strings.Cut(good, ".")
	for name, state := range map[string]string{
		"suffix (the suite's tampering)": good + "-TAMPERED",
		"round raised, signature kept":   strings.Replace(payload, "/1", "/2", 1) + "." + sig,
		"unsigned":                       payload,
		"signature not base64":           payload + ".!!",
		"signature of another key":       payload + ".AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"garbage":                        "{}",
	} {
		_, err := checkState("tool_a", state)
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), "integrity check", name)
		}
	}
	_, err := checkState("tool_b", good)
	if assert.Error(t, err, "a state of another tool") {
		assert.Contains(t, err.Error(), "another call")
	}
}
