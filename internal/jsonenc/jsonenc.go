// Package jsonenc appends JSON values byte for byte as encoding/json
// writes them, without reflection: the audit log's line encoder and the
// guard's argument digest share it, since both are on the path of every
// call and both must agree with json.Marshal.
package jsonenc

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendString appends s as a JSON string. Plain ASCII, what nearly every
// value is (digests, names, times), is copied; anything else goes through
// encoding/json, whose escaping (HTML characters, U+2028, invalid UTF-8)
// the hash depends on.
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// AppendFloat formats f as encoding/json does (ES6 number formatting). A
// NaN or an infinity, which json.Marshal refuses, is written as 0: the
// audit log's durations cannot be one, and a line is not failed for it.
func AppendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, '0')
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		if n := len(b) - start; n >= 4 && b[len(b)-4] == 'e' && b[len(b)-3] == '-' && b[len(b)-2] == '0' {
			b[len(b)-2] = b[len(b)-1]
			b = b[:len(b)-1]
		}
	}
	return b
}
