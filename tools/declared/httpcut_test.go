package declared

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// An endpoint that reflects the query and the request headers (as httpbin's
// /anything does) lets the model choose where the key lands in the body. A
// cut at max_output_bytes inside the key must not leave all but its last
// bytes in the result, in a 2xx body or in an error's.
func TestHTTPToolCutNeverLeavesPartOfTheSecret(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusBadRequest} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(r.URL.Query().Get("q") + r.Header.Get("X-Api-Key") + " and more text after it"))
		}))
		decl := httpDecl(srv.URL, "/anything")
		decl.MaxOutputBytes = 100
		if status != http.StatusOK {
			decl.MaxOutputBytes = 400 // the error shows errorBodyBytes of it
		}
		tool := HTTP{Getenv: getenv}.Tool(decl)
		for keep := 1; keep < len(apiKey); keep++ {
			pad := strings.Repeat("p", decl.MaxOutputBytes-keep)
			res := call(t, tool, map[string]any{"q": pad})
			text := resultText(res)
			if res.StructuredContent != nil {
				var out HTTPOut
				require.NoError(t, json.Unmarshal(structuredJSON(t, res), &out))
				text = out.Body
			}
			require.NotContains(t, text, apiKey[:max(keep, 8)], "status %d: %d bytes of the key survive the cut", status, keep)
		}
		srv.Close()
	}
}
