package money

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]Amount{
		"0": 0, "0.30": 300_000, "12": 12 * Unit, "0.000125": 125, "2.5": 2_500_000, " 1.000001 ": 1_000_001,
	} {
		got, err := Parse(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "-1", "+1", "1e3", "0.0000001", "1,5", ".5", "5.", "abc", "NaN", "Inf", "99999999999", "0x10"} {
		_, err := Parse(bad)
		assert.Error(t, err, bad)
	}
}

func TestString(t *testing.T) {
	for a, want := range map[Amount]string{0: "0.00", 300_000: "0.30", 12 * Unit: "12.00", 125: "0.000125", -450: "-0.00045"} {
		assert.Equal(t, want, a.String())
	}
}

func TestPerMillionRoundsUp(t *testing.T) {
	price, _ := Parse("0.30") // per million tokens
	assert.Equal(t, Amount(300_000), PerMillion(1_000_000, price))
	assert.Equal(t, Amount(1), PerMillion(1, price), "0.3 micro-units is billed as one")
	assert.Equal(t, Amount(300), PerMillion(1000, price))
	assert.Equal(t, Amount(0), PerMillion(0, price))
	assert.Equal(t, Amount(math.MaxInt64), PerMillion(math.MaxInt64, 1000*Unit), "saturates, never wraps")
}

func TestTokens(t *testing.T) {
	price, _ := Parse("2.50")
	assert.Equal(t, int64(400), Tokens(1000, price), "0.001 buys 400 tokens at 2.50 per million")
	assert.Equal(t, int64(0), Tokens(0, price))
	assert.Equal(t, int64(math.MaxInt64), Tokens(1, 0))
	for _, n := range []int64{1, 7, 399, 400, 12345} {
		assert.LessOrEqual(t, PerMillion(Tokens(PerMillion(n, price), price), price), PerMillion(n, price))
	}
}

func TestAddSaturates(t *testing.T) {
	assert.Equal(t, Amount(3), Add(1, 2))
	assert.Equal(t, Amount(math.MaxInt64), Add(math.MaxInt64-1, 5))
}
