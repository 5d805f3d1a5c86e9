package guard

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/toolwarden/toolwarden/internal/jsonenc"
)

// ArgsDigest is the SHA-256 of the arguments' canonical JSON (object keys
// sorted, no insignificant space): the bytes json.Marshal gives.
func ArgsDigest(args any) string {
	if args == nil {
		args = noArgs
	}
	buf := digestBufs.Get().(*[]byte)
	defer digestBufs.Put(buf)
	b, ok := appendCanonical((*buf)[:0], args, 0)
	if ok && cap(b) <= maxPooledDigestBuf {
		*buf = b
	}
	if !ok {
		var err error
		if b, err = json.Marshal(args); err != nil {
			b = []byte(fmt.Sprintf("unencodable:%T", args))
		}
	}
	sum := sha256.Sum256(b)
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	return string(h[:])
}

// noArgs is what a call without arguments is digested as: an empty
// object.
var noArgs any = map[string]any{}

// digestBufs are the buffers the canonical JSON is encoded into; one
// grown past maxPooledDigestBuf (large arguments) is not kept.
var digestBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

const maxPooledDigestBuf = 64 << 10

// maxCanonicalDepth bounds appendCanonical's recursion; deeper values
// (which validation refuses anyway) go to json.Marshal.
const maxCanonicalDepth = 64

// appendCanonical appends v's JSON, byte for byte what json.Marshal(v)
// gives, for the values decoding JSON yields (objects, arrays, strings,
// json.Number, float64, booleans, null) without reflection: the digest
// is taken on every call. It reports false, for json.Marshal to decide,
// on any other type, a number json.Marshal refuses, or a value nested
// deeper than maxCanonicalDepth. FuzzArgsDigest holds the two together.
func appendCanonical(b []byte, v any, depth int) ([]byte, bool) {
	if depth > maxCanonicalDepth {
		return b, false
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		if x {
			return append(b, "true"...), true
		}
		return append(b, "false"...), true
	case string:
		return jsonenc.AppendString(b, x), true
	case json.Number:
		if x == "" {
			x = "0"
		}
		if !validNumber(string(x)) {
			return b, false
		}
		return append(b, x...), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return b, false
		}
		return jsonenc.AppendFloat(b, x), true
	case []any:
		return appendArray(b, x, depth)
	case map[string]any:
		return appendObject(b, x, depth)
	}
	return b, false
}

func appendArray(b []byte, a []any, depth int) ([]byte, bool) {
	if a == nil {
		return append(b, "null"...), true
	}
	b = append(b, '[')
	for i, e := range a {
		if i > 0 {
			b = append(b, ',')
		}
		var ok bool
		if b, ok = appendCanonical(b, e, depth+1); !ok {
			return b, false
		}
	}
	return append(b, ']'), true
}

// appendObject appends m with its keys sorted, as json.Marshal sorts a
// map's string keys.
func appendObject(b []byte, m map[string]any, depth int) ([]byte, bool) {
	if m == nil {
		return append(b, "null"...), true
	}
	var arr [16]string
	keys := arr[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(jsonenc.AppendString(b, k), ':')
		var ok bool
		if b, ok = appendCanonical(b, m[k], depth+1); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// validNumber reports whether s is a JSON number, as encoding/json checks
// a json.Number before writing it.
func validNumber(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
		if s == "" {
			return false
		}
	}
	switch {
	case s[0] == '0':
		s = s[1:]
	case '1' <= s[0] && s[0] <= '9':
		s = skipDigits(s[1:])
	default:
		return false
	}
	if len(s) >= 2 && s[0] == '.' && isDigit(s[1]) {
		s = skipDigits(s[2:])
	}
	if len(s) >= 2 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s[0] == '+' || s[0] == '-' {
			s = s[1:]
			if s == "" {
				return false
			}
		}
		if !isDigit(s[0]) {
			return false
		}
		s = skipDigits(s[1:])
	}
	return s == ""
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func skipDigits(s string) string {
	for s != "" && isDigit(s[0]) {
		s = s[1:]
	}
	return s
}
