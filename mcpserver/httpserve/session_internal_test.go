package httpserve

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// needsSession answers the same for a body strictJSONRPC checked (from
// what the check learnt) as for the raw body (decoding it as mcp-go
// does), and leaves the checked body unread for mcp-go.
func TestNeedsSessionSameForCheckedBody(t *testing.T) {
	bodies := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":3,"result":{}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_META":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":5}}`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"ping"}`,
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"read_file","arguments":{"a_b":"_met"},"_mEtA":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"\u005fmeta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"_me"}}}`,
	}
	var handled []bool
	strict := strictJSONRPC(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		checked, err := needsSession(r)
		require.NoError(t, err)
		_, ok := r.Body.(*checkedBody)
		require.True(t, ok, "strictJSONRPC passes its checked body on")
		rest, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(rest)))
		require.NotEmpty(t, rest, "the body is left for mcp-go")
		plain, err := needsSession(r)
		require.NoError(t, err)
		require.Equal(t, plain, checked, "%s", rest)
		handled = append(handled, checked)
	}))
	for _, b := range bodies {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(b))
		rec := httptest.NewRecorder()
		strict.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code, "%s: %s", b, rec.Body)
	}
	require.Len(t, handled, len(bodies))
	require.Contains(t, handled, true)
	require.Contains(t, handled, false)
}
