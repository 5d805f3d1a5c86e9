package structured

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

type sample struct {
	Path  string         `json:"path"`
	Lines []string       `json:"lines"`
	Extra map[string]int `json:"extra,omitempty"`
}

// TestOutputSendsTheBytesChecked: the value handed to the wire encodes to
// exactly the JSON made once by New, so what the guard scanned is what
// leaves, and JSON reads every form a result may hold.
func TestOutputSendsTheBytesChecked(t *testing.T) {
	v := sample{Path: "a/<b>&\u2028.txt", Lines: []string{"x\n", "\x00y"}, Extra: map[string]int{"z": 1, "a": 2}}
	o, err := New(v)
	require.NoError(t, err)
	wire, err := json.Marshal(ForWire(o))
	require.NoError(t, err)
	require.Equal(t, string(o.JSON), string(wire))
	viaMarshaler, err := json.Marshal(o)
	require.NoError(t, err)
	require.Equal(t, string(o.JSON), string(viaMarshaler))

	for _, content := range []any{o, json.RawMessage(o.JSON), v} {
		got, err := JSON(content)
		require.NoError(t, err)
		require.JSONEq(t, string(o.JSON), string(got))
	}
	raw := json.RawMessage(`{"a":1}`)
	require.Equal(t, raw, ForWire(raw), "anything but an Output is left alone")
}
