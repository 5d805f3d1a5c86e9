package egress_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/egress/egresstest"
)

// TestPermitRefusesWhatTheListAllows: a call whose caller is not granted
// net:connect for an allowed host is refused by the permit's rule before
// the name is looked up or dialled; another caller's call on the same
// policy still gets through.
func TestPermitRefusesWhatTheListAllows(t *testing.T) {
	ca := egresstest.NewCA(t)
	srv := ca.Server(t, http.HandlerFunc(hello), "localhost")
	port := egresstest.Port(srv)
	var asked []string
	r := newRig(t, rigOpts{net: allow("localhost:" + port), resolver: egresstest.Resolver{"localhost": {"127.0.0.1"}},
		permit: func(host string, p uint16) (string, bool) {
			asked = append(asked, host)
			return `capabilities.deny:"net:connect:**:*"`, false
		}})
	_, _, resp := r.raw(t, "CONNECT localhost:"+port+" HTTP/1.1\r\nHost: x\r\n\r\n")
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Equal(t, `capabilities.deny:"net:connect:**:*"`, resp.Header.Get("X-Toolwarden-Rule"))
	require.Contains(t, body(t, resp), "net:connect:localhost:"+port+" is not granted")
	ev := r.waitEvents(t, 1)[0]
	require.False(t, ev.Allowed)
	require.Equal(t, `capabilities.deny:"net:connect:**:*"`, ev.Rule)
	require.Empty(t, ev.Addr, "nothing was dialled")
	require.Equal(t, []string{"localhost"}, asked)

	// Not listed: the allow list refuses first, the permit is not asked.
	_, _, resp = r.raw(t, "CONNECT localhost:1 HTTP/1.1\r\nHost: x\r\n\r\n")
	require.Equal(t, "exec.network.allow", resp.Header.Get("X-Toolwarden-Rule"))
	require.Len(t, asked, 1)

	granted := newRig(t, rigOpts{net: allow("localhost:" + port), resolver: egresstest.Resolver{"localhost": {"127.0.0.1"}},
		permit: func(string, uint16) (string, bool) { return "", true }})
	resp2, err := granted.client(ca.Pool()).Get("https://localhost:" + port + "/")
	require.NoError(t, err)
	require.Equal(t, "hello from localhost:"+port, body(t, resp2))
}
