// Package money holds amounts of a currency as integer micro-units (a
// millionth of the unit), so that prices and budgets are parsed from
// decimal text and add up exactly: no float ever holds money.
package money

import (
	"fmt"
	"math"
	"math/bits"
	"regexp"
	"strconv"
	"strings"
)

// Amount is a sum of money in micro-units of its currency.
type Amount int64

// Unit is one unit of a currency (1.000000).
const Unit Amount = 1_000_000

// maxUnits bounds what Parse accepts, far above any price or budget and
// far below where micro-units overflow.
const maxUnits = 1_000_000_000

var decimal = regexp.MustCompile(`^([0-9]{1,10})(?:\.([0-9]{1,6}))?$`)

// Parse reads a non-negative decimal amount such as "0.30", "12" or
// "0.000125": at most six decimals, no sign, exponent or separator.
func Parse(s string) (Amount, error) {
	m := decimal.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("%q is not a decimal amount (digits, at most six after the point, e.g. 0.30)", s)
	}
	units, _ := strconv.ParseInt(m[1], 10, 64)
	if units > maxUnits {
		return 0, fmt.Errorf("%q is over %d", s, maxUnits)
	}
	frac, _ := strconv.ParseInt((m[2] + "000000")[:6], 10, 64)
	return Amount(units)*Unit + Amount(frac), nil
}

// String writes the amount with the decimals it needs, at least two:
// "0.30", "12.00", "0.000125".
func (a Amount) String() string {
	sign := ""
	if a < 0 {
		sign, a = "-", -a
	}
	frac := strings.TrimRight(fmt.Sprintf("%06d", int64(a%Unit)), "0")
	for len(frac) < 2 {
		frac += "0"
	}
	return fmt.Sprintf("%s%d.%s", sign, int64(a/Unit), frac)
}

// PerMillion is the price of tokens at price per million tokens, rounded
// up to the micro-unit (a bill is never under-counted). It saturates at
// the largest Amount rather than wrap.
func PerMillion(tokens int64, price Amount) Amount {
	if tokens <= 0 || price <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(tokens), uint64(price))
	if hi >= 1_000_000 {
		return math.MaxInt64
	}
	q, r := bits.Div64(hi, lo, 1_000_000)
	if r > 0 {
		q++
	}
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return Amount(q)
}

// Tokens is how many tokens budget buys at price per million tokens,
// rounded down; price 0 buys any number (math.MaxInt64).
func Tokens(budget, price Amount) int64 {
	if budget <= 0 {
		return 0
	}
	if price <= 0 {
		return math.MaxInt64
	}
	hi, lo := bits.Mul64(uint64(budget), 1_000_000)
	q, _ := bits.Div64(hi, lo, uint64(price))
	return int64(min(q, math.MaxInt64))
}

// Add is a + b, saturating at the largest Amount.
func Add(a, b Amount) Amount {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
