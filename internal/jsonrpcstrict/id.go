package jsonrpcstrict

import (
	"github.com/go-json-experiment/json/jsontext"
)

// maxSafeID is the largest integer id answered: 2^53-1, beyond which a
// float64 (mcp-go decodes ids into one, as JavaScript does) can no longer
// hold every integer, so the echoed id could differ from the one sent.
const maxSafeID = 1<<53 - 1

// id reads an id: a string, an integer within ±(2^53-1) written as plain
// digits, or null (kept for error responses; classify refuses it on a
// request). Anything else is refused with a null id in the answer.
func (c *checker) id() (jsontext.Value, error) {
	kind := c.dec.PeekKind()
	v, err := c.dec.ReadValue()
	if err != nil {
		return nil, err
	}
	// v is in the decoder's buffer, reused once Check returns.
	end := c.dec.InputOffset()
	v = jsontext.Value(c.msg[end-int64(len(v)) : end])
	switch kind {
	case '"', 'n':
		return v, nil
	case '0':
		if !safeInteger(v) {
			return nil, invalid(`a numeric "id" must be an integer between -(2^53-1) and 2^53-1, written without fraction or exponent`)
		}
		return v, nil
	default:
		return nil, invalid(`"id" must be a string, an integer or null`)
	}
}

// safeInteger reports whether the number n is an integer written as plain
// digits (no fraction, exponent or "-0") whose value a float64 holds
// exactly, so that the echo is the same digits.
func safeInteger(n []byte) bool {
	digits := n
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
		if string(digits) == "0" {
			return false
		}
	}
	if len(digits) == 0 || len(digits) > 16 {
		return false
	}
	var v int64
	for _, d := range digits {
		if d < '0' || d > '9' {
			return false
		}
		v = v*10 + int64(d-'0')
	}
	return v <= maxSafeID
}
