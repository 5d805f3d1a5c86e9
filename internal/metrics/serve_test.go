package metrics

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCheckHost: the Hosts a DNS-rebinding page could send are refused,
// on a loopback listener and on one off loopback (metrics.allow_remote).
func TestCheckHost(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	loopback := checkHost(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9464}, ok)
	remote := checkHost(&net.TCPAddr{IP: net.IPv4zero, Port: 9464}, ok)
	for _, c := range []struct {
		host             string
		loopback, remote int
	}{
		{"127.0.0.1:9464", 200, 200},
		{"localhost:9464", 200, 200},
		{"LOCALHOST", 200, 200},
		{"[::1]:9464", 200, 200},
		{"127.0.0.2", 200, 200},
		{"evil.example:9464", 403, 403},
		{"evil.example", 403, 403},
		{"127.0.0.1.nip.io:9464", 403, 403},
		{"localhost.evil.example", 403, 403},
		{"", 403, 403},
		{"10.1.2.3:9464", 403, 200},
		{"[2001:db8::1]:9464", 403, 200},
	} {
		for _, h := range []struct {
			name    string
			handler http.Handler
			want    int
		}{{"loopback", loopback, c.loopback}, {"remote", remote, c.remote}} {
			r := httptest.NewRequest(http.MethodGet, Path, nil)
			r.Host = c.host
			w := httptest.NewRecorder()
			h.handler.ServeHTTP(w, r)
			require.Equal(t, h.want, w.Code, "%s listener, Host %q: %s", h.name, c.host, w.Body.String())
			if h.want == 403 {
				require.Contains(t, w.Body.String(), "against DNS rebinding")
			}
		}
	}
}
