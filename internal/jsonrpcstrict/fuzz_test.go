package jsonrpcstrict

import (
	"encoding/json"
	"testing"
)

// FuzzStrictCheck holds Check to two promises on any input: a refusal is a
// well-formed JSON-RPC error response, and an accepted message reads the
// same to encoding/json (mcp-go's lenient decoder) as it did to Check:
// same jsonrpc, method and id, the id echoed with the same bytes.
func FuzzStrictCheck(f *testing.F) {
	f.Add([]byte(call))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","result":{}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}`))
	for _, h := range hostile {
		if len(h.msg) < 4096 {
			f.Add([]byte(h.msg))
		}
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		m, err := Check(msg)
		if err != nil {
			e := err.(*Error)
			var resp map[string]any
			if json.Unmarshal(e.Response(), &resp) != nil {
				t.Fatalf("refusal %q is not JSON", e.Response())
			}
			return
		}
		var lenient struct {
			JSONRPC string `json:"jsonrpc"`
			Method  string `json:"method"`
			ID      any    `json:"id"`
		}
		if err := json.Unmarshal(msg, &lenient); err != nil {
			t.Fatalf("accepted %q, encoding/json refuses it: %v", msg, err)
		}
		if lenient.JSONRPC != "2.0" || lenient.Method != m.Method {
			t.Fatalf("accepted %q, encoding/json reads jsonrpc %q method %q, Check method %q", msg, lenient.JSONRPC, lenient.Method, m.Method)
		}
		if m.ID == nil {
			return
		}
		echo, _ := json.Marshal(lenient.ID)
		var want any
		_ = json.Unmarshal(m.ID, &want)
		if s, ok := want.(string); ok {
			want, _ = json.Marshal(s)
		} else {
			want = []byte(m.ID)
		}
		if string(echo) != string(want.([]byte)) {
			t.Fatalf("accepted %q, id %s would be echoed as %s", msg, m.ID, echo)
		}
	})
}
