package tools

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRecycledDecodersAreFresh: the recycled decoders decode each input
// as a new json.Decoder set up the same way does, whatever the inputs
// before it left behind: a second value, white space, garbage, an error,
// an unknown field, a large input.
func TestRecycledDecodersAreFresh(t *testing.T) {
	type args struct {
		Path  string `json:"path"`
		Limit int    `json:"limit,omitempty"`
	}
	inputs := []string{
		`{"path":"a.txt"}`,
		`{"path":"b.txt"} {"path":"c.txt"}`, // a second value: the first is decoded
		`{"path":"d.txt","limit":3}  `,
		`{"path":"e.txt"} garbage`,
		`{"path":`, // cut short
		`{"path":"a.txt"}`,
		`{"path":x}`, // a syntax error's offset, after a recycled decoder's success
		`{"path":"a.txt"}`,
		`{"path":"a.txt","limit":"3"}`, // a type error's
		`{"path":"f.txt","other":1}`,
		`{"path":"g.txt","limit":12345678901234567890}`,
		`[1, 2.50, -0]`,
		`{"path":"` + string(bytes.Repeat([]byte("x"), maxRecycled)) + `"}`,
		`{"PATH":"h.txt"}`,
		`  {"path":"i.txt"}`,
		`null`,
		`{"path":"j.txt"}`,
	}
	fresh := func(raw []byte, setup func(*json.Decoder), dst any) error {
		dec := json.NewDecoder(bytes.NewReader(raw))
		setup(dec)
		return dec.Decode(dst)
	}
	for range 3 { // decoders recycled across rounds too
		for _, in := range inputs {
			var gotAny, wantAny any
			gotErr := DecodeNumbers([]byte(in), &gotAny)
			wantErr := fresh([]byte(in), (*json.Decoder).UseNumber, &wantAny)
			require.Equal(t, wantErr, gotErr, "%.60s", in)
			require.Equal(t, wantAny, gotAny, "%.60s", in)

			var got, want args
			gotErr = decodeStrict([]byte(in), &got)
			wantErr = fresh([]byte(in), (*json.Decoder).DisallowUnknownFields, &want)
			require.Equal(t, wantErr, gotErr, "%.60s", in)
			require.Equal(t, want, got, "%.60s", in)
		}
	}
}
