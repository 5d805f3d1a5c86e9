package guard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// marshalDigest is ArgsDigest as it was written first: the SHA-256 of
// json.Marshal's bytes. ArgsDigest must give the same digest for every
// value, or the digests of old audit lines and pending approvals no
// longer match.
func marshalDigest(args any) string {
	if args == nil {
		args = map[string]any{}
	}
	b, err := json.Marshal(args)
	if err != nil {
		b = []byte(fmt.Sprintf("unencodable:%T", args))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestArgsDigestIsMarshalDigest(t *testing.T) {
	deep := any("x")
	for range maxCanonicalDepth + 5 {
		deep = []any{deep}
	}
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	for _, v := range []any{
		nil, map[string]any{}, map[string]any(nil), []any(nil), []any{}, "s", true, false, json.Number(""),
		json.Number("1e999999"), json.Number("-0.5E+3"), json.Number("01"), json.Number("1."), json.Number("abc"),
		1.0, 1e21, 1e-7, math.Copysign(0, -1), 123456789.125, math.NaN(), math.Inf(1), 3, int64(4), []string{"a"},
		map[string]any{"<a&b>": "\u2028\u2029", "bad": "\xff\xfe", "ctl": "\x00\x1f\"\\", "é": "ü", "": nil},
		map[string]any{"z": []any{1.5, json.Number("2"), map[string]any{"b": 1.0, "a": []any{}}}, "a": "x"},
		map[string]any{"k": map[string]int{"x": 1}}, deep, cyclic, make(chan int),
		map[string]any{strings.Repeat("k", 40): strings.Repeat("v", 100000)},
	} {
		require.Equal(t, marshalDigest(v), ArgsDigest(v), "%#v", v)
	}
	many := map[string]any{}
	for i := range 40 {
		many[fmt.Sprint("key", 40-i)] = i
	}
	require.Equal(t, marshalDigest(many), ArgsDigest(many))
}

// FuzzArgsDigest holds ArgsDigest to json.Marshal's digest over any JSON
// arguments, decoded as the server decodes them (numbers kept exact) and
// as plain float64s.
func FuzzArgsDigest(f *testing.F) {
	for _, seed := range []string{`{"path":"src/main.go"}`, `{"a":[1,2.50,-0e3,{"<":"\u2028"}],"b":null,"c":true}`, `{"\ud800":"\udfff"}`, `[[[[]]]]`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var exact any
		if dec.Decode(&exact) != nil {
			return
		}
		if got, want := ArgsDigest(exact), marshalDigest(exact); got != want {
			t.Fatalf("ArgsDigest(%q) = %s, json.Marshal gives %s", data, got, want)
		}
		var plain any
		if json.Unmarshal(data, &plain) != nil {
			return
		}
		if got, want := ArgsDigest(plain), marshalDigest(plain); got != want {
			t.Fatalf("ArgsDigest(%q as float64s) = %s, json.Marshal gives %s", data, got, want)
		}
	})
}

func BenchmarkArgsDigest(b *testing.B) {
	args := decodeJSON(b, `{"path":"src/main.go","offset":10,"limit":200}`)
	b.ReportAllocs()
	for b.Loop() {
		ArgsDigest(args)
	}
}

// BenchmarkArgsDigestMarshal is BenchmarkArgsDigest done as it was
// first, with json.Marshal: the figure ArgsDigest's encoder is measured
// against.
func BenchmarkArgsDigestMarshal(b *testing.B) {
	args := decodeJSON(b, `{"path":"src/main.go","offset":10,"limit":200}`)
	b.ReportAllocs()
	for b.Loop() {
		marshalDigest(args)
	}
}
