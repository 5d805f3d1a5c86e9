package hostcheck

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHostForms(t *testing.T) {
	for _, c := range []struct {
		host           string
		name           string
		loopback, isIP bool
	}{
		{"127.0.0.1:80", "127.0.0.1", true, true},
		{"localhost", "localhost", true, false},
		{"[::1]:8080", "::1", true, true},
		{"[::1]", "::1", true, true},
		{"10.0.0.1", "10.0.0.1", false, true},
		{"evil.example:80", "evil.example", false, false},
		{"127.0.0.1.nip.io", "127.0.0.1.nip.io", false, false},
		{"", "", false, false},
	} {
		require.Equal(t, c.name, Hostname(c.host), c.host)
		require.Equal(t, c.loopback, Loopback(c.host), c.host)
		require.Equal(t, c.isIP, IPLiteral(c.host), c.host)
	}
}

func TestHandlerNamesTheHostAndWhy(t *testing.T) {
	h := Handler(Loopback, "some.key", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Host = `evil".example`
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	require.Equal(t, http.StatusForbidden, w.Code)
	require.Equal(t, "forbidden: Host \"evil'.example\" is not allowed (some.key)\n", w.Body.String())
}
