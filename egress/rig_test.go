package egress_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/egress"
)

// rig is a proxy serving one call on a unix socket, as the sandbox side
// exposes it, with the events it emitted.
type rig struct {
	proxy *egress.Proxy
	call  *egress.Call
	sock  string

	mu     sync.Mutex
	events []egress.Event
}

type rigOpts struct {
	net      configs.Network
	limits   egress.Limits
	resolver egress.Resolver
	env      map[string]string
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	permit   egress.Permit
	scan     egress.Scanner
}

func newRig(t testing.TB, o rigOpts) *rig {
	t.Helper()
	r := &rig{}
	p, err := egress.New(egress.Options{Resolver: o.resolver, Dial: o.dial, Scan: o.scan, OnEvent: func(e egress.Event) {
		r.mu.Lock()
		r.events = append(r.events, e)
		r.mu.Unlock()
	}})
	require.NoError(t, err)
	pol, err := egress.NewPolicy("exec.network", o.net, func(k string) string { return o.env[k] })
	require.NoError(t, err)
	if o.permit != nil {
		pol = pol.WithPermit(o.permit)
	}
	r.proxy, r.call = p, p.Call("call-1", pol, o.limits)
	r.sock = filepath.Join(t.TempDir(), "egress.sock")
	l, err := net.Listen("unix", r.sock)
	require.NoError(t, err)
	go r.call.Serve(l)
	t.Cleanup(func() { r.call.Close() })
	return r
}

// client is an http.Client whose proxy is the rig, trusting roots only.
func (r *rig) client(roots *x509.CertPool) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "egress.proxy:3128"}),
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", r.sock)
		},
		TLSClientConfig:   &tls.Config{RootCAs: roots},
		DisableKeepAlives: true,
	}, Timeout: 30 * time.Second}
}

// raw sends one request head to the proxy and returns the connection and
// the response to it.
func (r *rig) raw(t testing.TB, head string) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	conn, err := net.Dial("unix", r.sock)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_, err = io.WriteString(conn, head)
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	return conn, br, resp
}

// connect opens a CONNECT tunnel to target and checks it was accepted.
func (r *rig) connect(t testing.TB, target string) net.Conn {
	t.Helper()
	conn, br, resp := r.raw(t, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
	require.Equal(t, 200, resp.StatusCode)
	require.Zero(t, br.Buffered())
	return conn
}

// waitEvents waits (generously: the machine may be loaded) for n events.
func (r *rig) waitEvents(t testing.TB, n int) []egress.Event {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r.mu.Lock()
		ev := append([]egress.Event(nil), r.events...)
		r.mu.Unlock()
		if len(ev) >= n || time.Now().After(deadline) {
			require.Len(t, ev, n, "events: %+v", ev)
			return ev
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// body reads a refusal's body.
func body(t testing.TB, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}

func allow(entries ...string) configs.Network { return configs.Network{Allow: entries} }

func listenLocal(t testing.TB) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return l
}

func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}
