package egress_test

// Attack tests: what a hostile program in the sandbox (or a brokered
// server that echoes what it receives) tries against the proxy. Each
// test states the claim it holds the proxy to.

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/egress"
	"github.com/toolwarden/toolwarden/egress/egresstest"
)

// secretPart is a piece of realToken that no placeholder, rule or
// message holds: finding it anywhere means the value leaked.
const secretPart = "real-secret"

// attackRig brokers realToken for api.test (served by h) and allows
// other.test, which records every request it gets.
type attackRig struct {
	*rig
	ca              *egresstest.CA
	port, otherPort string

	mu        sync.Mutex
	apiSeen   []string // each request api.test got, as a dump
	otherSeen []string
}

func newAttackRig(t *testing.T, h http.HandlerFunc, lim egress.Limits) *attackRig {
	t.Helper()
	ca := egresstest.NewCA(t)
	a := &attackRig{ca: ca}
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.apiSeen = append(a.apiSeen, dumpReq(r))
		a.mu.Unlock()
		h(w, r)
	})
	other := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.otherSeen = append(a.otherSeen, dumpReq(r))
		a.mu.Unlock()
		fmt.Fprint(w, "other")
	})
	a.port = egresstest.Port(ca.Server(t, api, "api.test"))
	a.otherPort = egresstest.Port(ca.Server(t, other, "other.test"))
	a.rig = newRig(t, rigOpts{
		net: configs.Network{
			Allow: []string{"api.test:" + a.port, "other.test:" + a.otherPort},
			Credentials: []configs.Credential{{Host: "api.test", Header: "Authorization",
				ValueEnv: "GITHUB_TOKEN", Placeholder: placeholder}},
			UpstreamCAFile: ca.File,
		},
		resolver: egresstest.Resolver{"api.test": {"127.0.0.1"}, "other.test": {"127.0.0.1"}},
		env:      map[string]string{"GITHUB_TOKEN": realToken},
		limits:   lim,
	})
	return a
}

func dumpReq(r *http.Request) string {
	body, _ := io.ReadAll(r.Body)
	return fmt.Sprintf("%s %s host=%s header=%v trailer=%v body=%q", r.Method, r.RequestURI, r.Host, r.Header, r.Trailer, body)
}

func (a *attackRig) sandboxPool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(a.proxy.CAPEM())
	return pool
}

// brokeredTLS opens a CONNECT tunnel to api.test and the TLS session the
// proxy terminates, as a sandboxed program would.
func (a *attackRig) brokeredTLS(t *testing.T, protos ...string) (*tls.Conn, error) {
	t.Helper()
	conn := a.connect(t, "api.test:"+a.port)
	tc := tls.Client(conn, &tls.Config{ServerName: "api.test", RootCAs: a.sandboxPool(), NextProtos: protos})
	return tc, tc.Handshake()
}

// checkServers: no request reached other.test, and api.test never got
// the value anywhere but its Authorization header.
func (a *attackRig) checkServers(t *testing.T) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	require.Empty(t, a.otherSeen, "a request reached the other host")
	for _, s := range a.apiSeen {
		require.NotContains(t, strings.ReplaceAll(s, "Authorization:["+realToken+"]", ""), secretPart,
			"the value reached api.test outside its header: %s", s)
	}
}

// noValue fails if the value is in what the sandbox received.
func noValue(t *testing.T, what ...any) {
	t.Helper()
	require.NotContains(t, fmt.Sprint(what...), secretPart, "the value reached the sandbox")
}

// TestAttackEchoCompressed: a server echoing the Authorization header
// in a gzip body hands the value back unless the proxy sees the body
// in clear: the sandbox asks for gzip (Go's client does by default) and
// decompresses. The value must not reach the sandbox, compressed or not.
func TestAttackEchoCompressed(t *testing.T) {
	gz := func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/asked" && !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			fmt.Fprint(w, "you sent: ", r.Header.Get("Authorization"))
			return
		}
		switch r.URL.Path {
		case "/listed":
			w.Header()["Content-Encoding"] = []string{"identity", "gzip"}
		case "/joined":
			w.Header().Set("Content-Encoding", "identity, gzip")
		default:
			w.Header().Set("Content-Encoding", "gzip")
		}
		zw := gzip.NewWriter(w)
		fmt.Fprint(zw, "you sent: ", r.Header.Get("Authorization"))
		zw.Close()
	}
	a := newAttackRig(t, gz, egress.Limits{})
	for _, path := range []string{"/asked", "/always", "/listed", "/joined"} {
		t.Run(path, func(t *testing.T) {
			// Go's client adds Accept-Encoding: gzip and decompresses.
			c := a.client(a.sandboxPool())
			req, _ := http.NewRequest("GET", "https://api.test:"+a.port+path, nil)
			req.Header.Set("Authorization", placeholder)
			resp, err := c.Do(req)
			if err != nil {
				return // cut: nothing reached the sandbox
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			noValue(t, resp.Header, string(got))
			// And with the encoding asked for by hand, decoded by hand.
			req, _ = http.NewRequest("GET", "https://api.test:"+a.port+path, nil)
			req.Header.Set("Authorization", placeholder)
			req.Header.Set("Accept-Encoding", "gzip")
			resp, err = c.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if zr, err := gzip.NewReader(strings.NewReader(string(raw))); err == nil {
				dec, _ := io.ReadAll(zr)
				noValue(t, string(dec))
			}
			noValue(t, string(raw))
		})
	}
	a.checkServers(t)
}

// TestAttackEchoRaw: a server echoing the value back, read raw as the
// sandbox receives it, in each way a response can carry it: the value
// never reaches the sandbox.
func TestAttackEchoRaw(t *testing.T) {
	tests := []struct {
		name  string
		echo  http.HandlerFunc
		extra string // request headers beside Host and Authorization
		check func(t *testing.T, all string)
	}{
		// In a response trailer (a header sent after the body).
		{"in a trailer", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Trailer", "X-Echo")
			w.WriteHeader(200)
			fmt.Fprint(w, "ok")
			w.(http.Flusher).Flush()
			w.Header().Set("X-Echo", r.Header.Get("Authorization"))
		}, "TE: trailers\r\n", nil},
		// In the status line's reason phrase (which may hold spaces):
		// refused.
		{"in the status line", func(w http.ResponseWriter, r *http.Request) {
			conn, bw, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			fmt.Fprintf(bw, "HTTP/1.1 200 %s\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok", r.Header.Get("Authorization"))
			bw.Flush()
		}, "", func(t *testing.T, all string) {
			require.Contains(t, all, "in its status line")
		}},
		// One flushed byte at a time (each its own chunk): still cut
		// before any of it passes a whole match, and no prefix long
		// enough to matter is handed on.
		{"byte by byte", func(w http.ResponseWriter, r *http.Request) {
			v := r.Header.Get("Authorization")
			for i := range len(v) {
				io.WriteString(w, v[i:i+1])
				w.(http.Flusher).Flush()
			}
		}, "", func(t *testing.T, all string) {
			require.NotContains(t, all, realToken[:len(realToken)-1], "all but the last byte passed")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAttackRig(t, tt.echo, egress.Limits{})
			tc, err := a.brokeredTLS(t)
			require.NoError(t, err)
			fmt.Fprintf(tc, "GET / HTTP/1.1\r\nHost: api.test:%s\r\nAuthorization: %s\r\n%sConnection: close\r\n\r\n", a.port, placeholder, tt.extra)
			all, _ := io.ReadAll(tc) // everything the sandbox receives, raw
			noValue(t, string(all))
			if tt.check != nil {
				tt.check(t, string(all))
			}
			a.checkServers(t)
		})
	}
}

// TestAttackPipelinedToAnotherHost: two requests in one write through a
// brokered tunnel, the second naming another host: each is checked on
// its own, and the second never reaches anyone.
func TestAttackPipelinedToAnotherHost(t *testing.T) {
	a := newAttackRig(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "api") }, egress.Limits{})
	tc, err := a.brokeredTLS(t)
	require.NoError(t, err)
	fmt.Fprintf(tc, "GET /1 HTTP/1.1\r\nHost: api.test:%s\r\nAuthorization: %s\r\n\r\n"+
		"GET /2 HTTP/1.1\r\nHost: other.test:%s\r\nAuthorization: %s\r\n\r\n", a.port, placeholder, a.otherPort, placeholder)
	br := bufio.NewReader(tc)
	r1, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, 200, r1.StatusCode)
	require.Equal(t, "api", body(t, r1))
	r2, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, r2.StatusCode)
	require.Contains(t, body(t, r2), "is not the CONNECT's host")
	a.checkServers(t)
	require.Len(t, a.apiSeen, 1)
}

// TestAttackSmuggling: framing tricks (Transfer-Encoding with
// Content-Length, two Content-Lengths, a chunked body holding a second
// request) never carry a request past the checks: the proxy re-frames
// what it sends, so a hidden request is body or refused, never a request
// with the value to another host.
func TestAttackSmuggling(t *testing.T) {
	a := newAttackRig(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "api") }, egress.Limits{})
	hidden := fmt.Sprintf("GET /x HTTP/1.1\r\nHost: other.test:%s\r\nAuthorization: %s\r\n\r\n", a.otherPort, placeholder)
	heads := map[string]string{
		"TE and CL": fmt.Sprintf("POST / HTTP/1.1\r\nHost: api.test:%s\r\nAuthorization: %s\r\nContent-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n%s",
			a.port, placeholder, 5+len(hidden), hidden),
		"two CLs": fmt.Sprintf("POST / HTTP/1.1\r\nHost: api.test:%s\r\nAuthorization: %s\r\nContent-Length: 0\r\nContent-Length: %d\r\n\r\n%s",
			a.port, placeholder, len(hidden), hidden),
		"TE obfuscated": fmt.Sprintf("POST / HTTP/1.1\r\nHost: api.test:%s\r\nAuthorization: %s\r\nTransfer-Encoding: xchunked\r\nContent-Length: 0\r\n\r\n%s",
			a.port, placeholder, hidden),
		"obs-fold into another header": fmt.Sprintf("GET / HTTP/1.1\r\nHost: api.test:%s\r\nX-Other: a\r\n %s\r\n\r\n", a.port, placeholder),
		"obs-fold of Host":             fmt.Sprintf("GET / HTTP/1.1\r\nHost: api.test:%s\r\n other.test\r\nAuthorization: %s\r\n\r\n", a.port, placeholder),
	}
	for name, head := range heads {
		t.Run(name, func(t *testing.T) {
			tc, err := a.brokeredTLS(t)
			require.NoError(t, err)
			io.WriteString(tc, head)
			tc.SetReadDeadline(time.Now().Add(20 * time.Second))
			all, _ := io.ReadAll(tc)
			noValue(t, string(all))
		})
	}
	a.checkServers(t)
}

// TestAttackRedirectNotFollowed: a brokered host redirecting elsewhere
// is answered to the sandbox as is; the proxy follows nothing, so the
// value goes to no other host.
func TestAttackRedirectNotFollowed(t *testing.T) {
	var a *attackRig
	a = newAttackRig(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://other.test:"+a.otherPort+"/stolen", http.StatusTemporaryRedirect)
	}, egress.Limits{})
	c := a.client(a.sandboxPool())
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, _ := http.NewRequest("GET", "https://api.test:"+a.port+"/", nil)
	req.Header.Set("Authorization", placeholder)
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusTemporaryRedirect, resp.StatusCode)
	a.checkServers(t)
}

// TestAttackHTTP2 offers h2 to a brokered host: the proxy speaks
// HTTP/1.1 only, so an h2-only client is refused in the handshake and an
// h2 preface is no request.
func TestAttackHTTP2(t *testing.T) {
	a := newAttackRig(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "api") }, egress.Limits{})
	tc, err := a.brokeredTLS(t, "h2", "http/1.1")
	require.NoError(t, err)
	require.Equal(t, "http/1.1", tc.ConnectionState().NegotiatedProtocol)
	_, err = a.brokeredTLS(t, "h2")
	require.ErrorContains(t, err, "no application protocol")

	tc, err = a.brokeredTLS(t)
	require.NoError(t, err)
	io.WriteString(tc, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err == nil {
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
	}
	a.checkServers(t)
	require.Empty(t, a.apiSeen)
}

// TestAttackConnectHostHeader: a CONNECT's Host header differing from
// its target changes nothing: the target decides, both for the allow
// list and for interception.
func TestAttackConnectHostHeader(t *testing.T) {
	a := newAttackRig(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "api") }, egress.Limits{})
	_, _, resp := a.raw(t, "CONNECT evil.test:443 HTTP/1.1\r\nHost: api.test:"+a.port+"\r\n\r\n")
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Contains(t, body(t, resp), "host not allowed: evil.test:443")

	// CONNECT other.test with Host api.test: tunnelled, not intercepted.
	conn, _, resp := a.raw(t, "CONNECT other.test:"+a.otherPort+" HTTP/1.1\r\nHost: api.test:"+a.port+"\r\n\r\n")
	require.Equal(t, 200, resp.StatusCode)
	tc := tls.Client(conn, &tls.Config{ServerName: "other.test", RootCAs: a.sandboxPool()})
	require.ErrorContains(t, tc.Handshake(), "certificate", "the ephemeral CA signed a host without credentials")
}

// TestAttackUnsentRequestsHoldNoSlot: connections that never finish
// their request head (a slowloris) count against MaxConns like any
// other: they cannot hold the server's descriptors past the cap.
func TestAttackUnsentRequestsHoldNoSlot(t *testing.T) {
	a := newAttackRig(t, func(w http.ResponseWriter, r *http.Request) {}, egress.Limits{MaxConns: 2})
	// Three connections that never end their request head: whichever the
	// proxy takes last (it accepts them in its own order) is refused.
	answers := make(chan string, 3)
	for range 3 {
		conn, err := net.Dial("unix", a.sock)
		require.NoError(t, err)
		t.Cleanup(func() { conn.Close() })
		_, err = io.WriteString(conn, "CONNECT api.test:"+a.port) // never ends
		require.NoError(t, err)
		go func() {
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				return
			}
			b, _ := io.ReadAll(resp.Body)
			answers <- fmt.Sprint(resp.StatusCode, " ", strings.TrimSpace(string(b)))
		}()
	}
	select {
	case got := <-answers:
		require.Equal(t, "403 toolwarden egress: more than 2 connections at once (limits.max_connections)", got)
	case <-time.After(20 * time.Second):
		t.Fatal("three half-sent connections were all held open under MaxConns 2")
	}
}

// TestAttackEphemeralCA: the CA signs nothing but leaves (path length
// 0), lives at most its week, and its key is not in what CAPEM gives.
func TestAttackEphemeralCA(t *testing.T) {
	p, err := egress.New(egress.Options{})
	require.NoError(t, err)
	pemBytes := p.CAPEM()
	require.NotContains(t, string(pemBytes), "PRIVATE KEY")
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(pemBytes))
	rest := pemBytes
	var certs int
	for {
		blk, r := pem.Decode(rest)
		if blk == nil {
			break
		}
		rest = r
		certs++
		c, err := x509.ParseCertificate(blk.Bytes)
		require.NoError(t, err)
		require.True(t, c.IsCA)
		require.True(t, c.MaxPathLenZero, "the CA could sign another CA")
		require.Equal(t, x509.KeyUsageCertSign, c.KeyUsage)
		require.LessOrEqual(t, time.Until(c.NotAfter), 7*24*time.Hour+time.Minute)
	}
	require.Equal(t, 1, certs)
}

// TestAttackAddressSpellings: names resolving to IPv6 spellings that
// embed an IPv4 address (IPv4-compatible ::a.b.c.d, SIIT
// ::ffff:0:a.b.c.d) are refused like the address they embed would be;
// over-long names and targets are refused, not truncated and matched.
func TestAttackAddressSpellings(t *testing.T) {
	r := newRig(t, rigOpts{
		net: allow("*.example.com:443"),
		resolver: egresstest.Resolver{
			"compat.example.com": {"::a9fe:a9fe"},
			"siit.example.com":   {"::ffff:0:a9fe:a9fe"},
			"loop.example.com":   {"::7f00:1"},
		},
		dial: func(context.Context, string, string) (net.Conn, error) {
			return nil, errors.New("dialled")
		},
	})
	tests := []struct{ name, target, rule string }{
		{"compat", "compat.example.com:443", "exec.network.allow"},
		{"siit", "siit.example.com:443", "exec.network.allow"},
		{"loop", "loop.example.com:443", "exec.network.allow"},
		{"64-byte label", strings.Repeat("a", 64) + ".example.com:443", "egress.target"},
		{"254-byte name", strings.Repeat("a.", 130) + "example.com:443", "egress.target"},
		{"a head past 64 KiB", strings.Repeat("a", 70<<10) + ".example.com:443", "egress.method"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, resp := r.raw(t, "CONNECT "+tt.target+" HTTP/1.1\r\n\r\n")
			require.Equal(t, http.StatusForbidden, resp.StatusCode)
			require.Contains(t, body(t, resp), "("+tt.rule+")")
		})
	}
}

// TestAttackSplitClientHello: a ClientHello sent a byte at a time is
// still read whole and checked (and a good one passes): splitting it
// across segments is no way around the SNI check.
func TestAttackSplitClientHello(t *testing.T) {
	a := newAttackRig(t, func(w http.ResponseWriter, r *http.Request) {}, egress.Limits{})
	for _, tt := range []struct {
		sni string
		ok  bool
	}{{"other.test", true}, {"OTHER.TEST", true}, {"api.test", false}} {
		t.Run(tt.sni, func(t *testing.T) {
			conn := a.connect(t, "other.test:"+a.otherPort)
			tc := tls.Client(byteWriter{conn}, &tls.Config{ServerName: tt.sni, RootCAs: a.ca.Pool()})
			err := tc.Handshake()
			if tt.ok {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
		})
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	require.Empty(t, a.otherSeen)
}

// byteWriter writes one byte per Write of the connection under it.
type byteWriter struct{ net.Conn }

func (b byteWriter) Write(p []byte) (int, error) {
	for i := range p {
		if _, err := b.Conn.Write(p[i : i+1]); err != nil {
			return i, err
		}
	}
	return len(p), nil
}

// TestAttackPlainPipelined: plain http serves one request per
// connection; a second one in the same write is never sent anywhere.
func TestAttackPlainPipelined(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "plain")
	}))
	t.Cleanup(srv.Close)
	port := portOf(srv.Listener.Addr().String())
	r := newRig(t, rigOpts{net: allow("plain.test:" + port), resolver: egresstest.Resolver{"plain.test": {"127.0.0.1"}}})
	one := "GET http://plain.test:" + port + "/1 HTTP/1.1\r\nHost: plain.test:" + port + "\r\n\r\n"
	conn, br, resp := r.raw(t, one+strings.Replace(one, "/1", "/2", 1))
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "plain", body(t, resp))
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	rest, _ := io.ReadAll(br)
	require.Empty(t, rest, "a second response came back")
	require.EqualValues(t, 1, hits.Load())
}
