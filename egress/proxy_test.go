package egress_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/egress"
	"github.com/toolwarden/toolwarden/egress/egresstest"
)

func hello(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello from ", r.Host) }

// TestAllowedHostThroughConnect: an ordinary client with the proxy set
// reaches an allowed local HTTPS server, the TLS session end to end (the
// client trusts the server's own CA only), and the connection is one
// allowed event.
func TestAllowedHostThroughConnect(t *testing.T) {
	ca := egresstest.NewCA(t)
	srv := ca.Server(t, http.HandlerFunc(hello), "localhost")
	port := egresstest.Port(srv)
	r := newRig(t, rigOpts{net: allow("localhost:" + port), resolver: egresstest.Resolver{"localhost": {"127.0.0.1"}}})

	resp, err := r.client(ca.Pool()).Get("https://localhost:" + port + "/")
	require.NoError(t, err)
	require.Equal(t, "hello from localhost:"+port, body(t, resp))

	ev := r.waitEvents(t, 1)[0]
	require.True(t, ev.Allowed, "%+v", ev)
	require.Equal(t, "call-1", ev.CallID)
	require.Equal(t, "localhost", ev.Host)
	require.Equal(t, port, fmt.Sprint(ev.Port))
	require.Equal(t, "127.0.0.1", ev.Addr)
	require.Empty(t, ev.Rule)
	require.False(t, ev.CredentialInjected)
	require.Positive(t, ev.BytesUp)
	require.Positive(t, ev.BytesDown)
}

// TestRefusedTargets: every target not listed, every other spelling of a
// listed address, and every name resolving where it may not go is
// answered 403 naming the rule, and nothing is dialled.
func TestRefusedTargets(t *testing.T) {
	ca := egresstest.NewCA(t)
	srv := ca.Server(t, http.HandlerFunc(hello), "localhost")
	port := egresstest.Port(srv)
	var dialled atomic.Int64
	r := newRig(t, rigOpts{
		net: allow("localhost:"+port, "*.example.com:"+port, "meta.test:"+port, "[fd00::5]:"+port),
		resolver: egresstest.Resolver{
			"localhost":         {"127.0.0.1"},
			"other.test":        {"127.0.0.1"},
			"pkg.example.com":   {"10.0.0.7"},
			"mixed.example.com": {"203.0.113.7", "127.0.0.1"},
			"cgnat.example.com": {"100.64.1.1"},
			"v6.example.com":    {"::ffff:127.0.0.1"},
			"ula.example.com":   {"fd12::1"},
			"meta.test":         {"169.254.169.254"},
			"link.example.com":  {"169.254.10.1"},
		},
		dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dialled.Add(1)
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	})
	const allowKey, target = "exec.network.allow", "egress.target"
	tests := []struct{ name, target, rule, reason string }{
		{"other port", "localhost:1", allowKey, "host not allowed"},
		{"other name", "other.test:" + port, allowKey, "host not allowed"},
		{"IP not listed", "127.0.0.1:" + port, allowKey, "is not listed exactly"},
		{"v6 loopback", "[::1]:" + port, allowKey, "is not listed exactly"},
		{"listed v6 on another port", "[fd00::5]:1", allowKey, "is not listed exactly"},
		{"decimal", "2130706433:" + port, target, "last label does not start with a letter"},
		{"octal", "0177.0.0.1:" + port, target, "last label does not start with a letter"},
		{"hex", "0x7f.1:" + port, target, "last label does not start with a letter"},
		{"hex whole", "0x7f000001:" + port, target, "last label does not start with a letter"},
		{"short form", "127.1:" + port, target, "last label does not start with a letter"},
		{"IPv4-mapped", "[::ffff:127.0.0.1]:" + port, target, "IPv4-mapped"},
		{"zone", "[fe80::1%25lo]:" + port, target, "zone"},
		{"trailing dot", "localhost.:" + port, target, "no trailing dot"},
		{"percent-encoding", "%6cocalhost:" + port, "egress.method", "invalid URL escape"},
		{"percent-encoded dot", "localhost%2e:" + port, "egress.method", "invalid URL escape"},
		{"userinfo", "user@localhost:" + port, target, "not a plain DNS name"},
		{"no port", "localhost", target, "not host:port"},
		{"wildcard to private", "pkg.example.com:" + port, allowKey, "resolves to 10.0.0.7, a private address"},
		{"wildcard, one answer loopback", "mixed.example.com:" + port, allowKey, "resolves to 127.0.0.1, a loopback address"},
		{"wildcard to CGNAT", "cgnat.example.com:" + port, allowKey, "a shared (CGNAT) address"},
		{"wildcard to mapped loopback", "v6.example.com:" + port, allowKey, "resolves to 127.0.0.1"},
		{"wildcard to ULA", "ula.example.com:" + port, allowKey, "a private address"},
		{"exact name to metadata", "meta.test:" + port, allowKey, "resolves to 169.254.169.254, a cloud metadata address"},
		{"wildcard to link-local", "link.example.com:" + port, allowKey, "a link-local address"},
		{"apex of a wildcard", "example.com:" + port, allowKey, "host not allowed"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, resp := r.raw(t, "CONNECT "+tt.target+" HTTP/1.1\r\nHost: x\r\n\r\n")
			require.Equal(t, http.StatusForbidden, resp.StatusCode)
			b := body(t, resp)
			require.Contains(t, b, "toolwarden egress: ")
			require.Contains(t, b, tt.reason)
			require.True(t, strings.HasSuffix(b, "("+tt.rule+")"), b)
			ev := r.waitEvents(t, i+1)[i]
			require.False(t, ev.Allowed)
			require.Equal(t, tt.rule, ev.Rule)
		})
	}
	require.Zero(t, dialled.Load(), "a refused target is never dialled")

	// The same for plain http's absolute-URI requests, and a request
	// that names no target at all.
	plain := []struct{ name, head, want string }{
		{"plain http, octal", "GET http://0177.0.0.1:" + port + "/ HTTP/1.1\r\nHost: 0177.0.0.1:" + port + "\r\n\r\n", "(egress.target)"},
		{"plain http, userinfo", "GET http://localhost:" + port + "@evil.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n", "userinfo or percent-encoding"},
		{"origin-form request", "GET / HTTP/1.1\r\nHost: localhost:" + port + "\r\n\r\n", "(egress.method)"},
	}
	for _, tt := range plain {
		t.Run(tt.name, func(t *testing.T) {
			_, _, resp := r.raw(t, tt.head)
			require.Equal(t, http.StatusForbidden, resp.StatusCode)
			require.Contains(t, body(t, resp), tt.want)
		})
	}
	require.Zero(t, dialled.Load(), "a refused request is never dialled")
}

// TestNameCheckedIsNameDialled: the proxy looks a name up once and
// connects to the address it checked; a rebinding resolver's second
// answer never matters.
func TestNameCheckedIsNameDialled(t *testing.T) {
	ca := egresstest.NewCA(t)
	srv := ca.Server(t, http.HandlerFunc(hello), "pkg.example.com")
	port := egresstest.Port(srv)
	var lookups atomic.Int64
	var dialled []string
	var mu sync.Mutex
	res := rebinding{first: "203.0.113.7", then: "169.254.169.254", n: &lookups}
	r := newRig(t, rigOpts{net: allow("*.example.com:" + port), resolver: res,
		dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			mu.Lock()
			dialled = append(dialled, addr)
			mu.Unlock()
			// Stand in for 203.0.113.7: the test never leaves loopback.
			return (&net.Dialer{}).DialContext(ctx, network, "127.0.0.1:"+port)
		}})
	resp, err := r.client(ca.Pool()).Get("https://pkg.example.com:" + port + "/")
	require.NoError(t, err)
	require.Equal(t, "hello from pkg.example.com:"+port, body(t, resp))
	require.Equal(t, int64(1), lookups.Load())
	require.Equal(t, []string{"203.0.113.7:" + port}, dialled)
	require.Equal(t, "203.0.113.7", r.waitEvents(t, 1)[0].Addr)
}

type rebinding struct {
	first, then string
	n           *atomic.Int64
}

func (r rebinding) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	a := r.then
	if r.n.Add(1) == 1 {
		a = r.first
	}
	return egresstest.Resolver{host: {a}}.LookupNetIP(ctx, network, host)
}

// TestSNIChecked: after CONNECT, a ClientHello naming another host, none,
// or no TLS at all ends the tunnel before a byte reaches the server.
func TestSNIChecked(t *testing.T) {
	ca := egresstest.NewCA(t)
	var hits atomic.Int64
	srv := ca.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }), "localhost", "other.test")
	port := egresstest.Port(srv)
	r := newRig(t, rigOpts{net: allow("localhost:" + port), resolver: egresstest.Resolver{"localhost": {"127.0.0.1"}}})
	tests := []struct {
		name string
		talk func(net.Conn) error
		rule string
	}{
		{"other name", tlsHello("other.test"), egress.RuleSNI},
		{"no name", tlsHello(""), egress.RuleSNI},
		{"not TLS", func(c net.Conn) error {
			_, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
			return err
		}, egress.RuleTLSOnly},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := r.connect(t, "localhost:"+port)
			tt.talk(conn)
			_, err := conn.Read(make([]byte, 1))
			require.Error(t, err, "the proxy closes the tunnel")
			ev := r.waitEvents(t, i+1)[i]
			require.False(t, ev.Allowed)
			require.Equal(t, tt.rule, ev.Rule)
		})
	}
	require.Zero(t, hits.Load())
}

// tlsHello starts a TLS handshake naming sni (none when empty).
func tlsHello(sni string) func(net.Conn) error {
	return func(c net.Conn) error {
		return tls.Client(c, &tls.Config{ServerName: sni, InsecureSkipVerify: true}).Handshake()
	}
}
