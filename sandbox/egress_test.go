package sandbox_test

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/sandbox"
)

// testCA is a CA and a certificate it signed for example.test, standing
// in for the egress proxy's per-server CA.
type testCA struct {
	pem  []byte
	leaf tls.Certificate
}

func newTestCA(t *testing.T) testCA {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "toolwarden test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err = x509.ParseCertificate(caDER)
	require.NoError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "example.test"},
		DNSNames: []string{"example.test"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	require.NoError(t, err)
	return testCA{pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		leaf: tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: key}}
}

// testProxy is a tiny egress proxy: it answers absolute-URI requests
// itself and, for CONNECT, terminates TLS with the test CA's certificate
// and answers that request too. It records what it saw.
type testProxy struct {
	ca     testCA
	mu     sync.Mutex
	seen   []string
	served chan struct{}
}

func newTestProxy(t *testing.T) *testProxy {
	return &testProxy{ca: newTestCA(t), served: make(chan struct{})}
}

func (p *testProxy) network() *sandbox.Network {
	return &sandbox.Network{CACertPEM: p.ca.pem, Serve: func(l net.Listener) {
		defer close(p.served)
		_ = (&http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}).Serve(l)
	}}
}

func (p *testProxy) saw(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, s)
}

func (p *testProxy) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen)
}

func (p *testProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		p.saw(r.Method + " " + r.URL.String())
		fmt.Fprint(w, "plain answer from the test proxy")
		return
	}
	p.saw("CONNECT " + r.Host)
	c, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer c.Close()
	if _, err := c.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		return
	}
	tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{p.ca.leaf}})
	req, err := http.ReadRequest(bufio.NewReader(tc))
	if err != nil {
		p.saw("TLS failed: " + err.Error())
		return
	}
	p.saw("TLS " + req.Method + " " + req.Host + req.URL.Path)
	body := "TLS answer from the test proxy"
	fmt.Fprintf(tc, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
}

// fetchScript fetches each URL through the proxy the environment names;
// the second HTTPS fetch trusts only the system bundle path.
const fetchScript = `import os, urllib.request
for u in ["http://example.test/", "https://example.test/"]:
    print(urllib.request.urlopen(u, timeout=20).read().decode())
del os.environ["SSL_CERT_FILE"]
import ssl
print(urllib.request.urlopen("https://example.test/", timeout=20, context=ssl.create_default_context()).read().decode())
`

// TestEgressThroughTheProxyOnly: a run with a Network reaches the proxy
// the server serves, through the proxy variables, trusting the server's CA
// beside the system roots; and nothing else: not the host's loopback or
// addresses, not UDP, not DNS, not an abstract socket.
func TestEgressThroughTheProxyOnly(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "fake-secret-for-egress-test")
	hostRoots := bytes.Count(systemBundle(t), []byte("BEGIN CERTIFICATE"))
	for _, r := range runners(t) {
		t.Run(r.Name(), func(t *testing.T) {
			t.Run("proxy-aware programs reach the proxy, TLS verifies", func(t *testing.T) {
				p := newTestProxy(t)
				res := run(t, r, sandbox.Request{Argv: []string{"/usr/bin/python3", "-c", fetchScript}, Network: p.network()})
				require.Equal(t, 0, res.ExitCode, string(res.Stderr))
				require.Equal(t, "plain answer from the test proxy\nTLS answer from the test proxy\nTLS answer from the test proxy\n", string(res.Stdout))
				require.Equal(t, []string{"GET http://example.test/", "CONNECT example.test:443", "TLS GET example.test/",
					"CONNECT example.test:443", "TLS GET example.test/"}, p.requests())
				requireClosed(t, p.served, "the proxy's listener is closed once Run returns")
			})
			if _, err := os.Stat("/usr/bin/curl"); err == nil {
				t.Run("curl through the proxy", func(t *testing.T) {
					p := newTestProxy(t)
					res := run(t, r, sandbox.Request{Argv: bash("curl -sS http://example.test/ && echo && curl -sS https://example.test/"), Network: p.network()})
					require.Equal(t, 0, res.ExitCode, string(res.Stderr))
					require.Equal(t, "plain answer from the test proxy\nTLS answer from the test proxy", string(res.Stdout))
				})
			}
			t.Run("the trust store holds the system roots and the CA", func(t *testing.T) {
				p := newTestProxy(t)
				res := run(t, r, sandbox.Request{Argv: bash("grep -c 'BEGIN CERTIFICATE' " + sandbox.CABundle + "; cat " + sandbox.NetDir + "/ca.pem; ls -A " + sandbox.NetDir),
					Network: p.network()})
				require.Equal(t, 0, res.ExitCode, string(res.Stderr))
				require.Equal(t, fmt.Sprintf("%d\n%sca.pem\nproxy.sock\ntoolwarden-forward\n", hostRoots+1, p.ca.pem), string(res.Stdout))
			})
			t.Run("a program ignoring the proxy reaches nothing", func(t *testing.T) {
				tcp, err := net.Listen("tcp", ":0")
				require.NoError(t, err)
				defer tcp.Close()
				accepted := make(chan struct{}, 1)
				go func() {
					if c, err := tcp.Accept(); err == nil {
						c.Close()
						accepted <- struct{}{}
					}
				}()
				udp, err := net.ListenPacket("udp", ":0")
				require.NoError(t, err)
				defer udp.Close()
				abstract := fmt.Sprintf("@toolwarden-egress-test-%d", os.Getpid())
				ua, err := net.Listen("unix", abstract)
				require.NoError(t, err)
				defer ua.Close()
				go func() {
					if c, err := ua.Accept(); err == nil {
						c.Close()
						accepted <- struct{}{}
					}
				}()
				targets := append([]string{"127.0.0.1"}, hostAddrs(t)...)
				p := newTestProxy(t)
				res := run(t, r, sandbox.Request{Argv: []string{"/usr/bin/python3", "-c", escapeScript}, Env: []string{
					"PATH=/usr/bin:/bin", "TARGETS=" + strings.Join(targets, ","),
					fmt.Sprintf("TCP_PORT=%d", tcp.Addr().(*net.TCPAddr).Port), fmt.Sprintf("UDP_PORT=%d", udp.LocalAddr().(*net.UDPAddr).Port),
					"ABSTRACT=" + strings.TrimPrefix(abstract, "@")}, Network: p.network()})
				require.Equal(t, 0, res.ExitCode, string(res.Stderr))
				out := string(res.Stdout)
				t.Log(out)
				require.NotContains(t, out, "REACHED", out)
				for _, target := range targets {
					require.Contains(t, out, "tcp "+target+" refused", out)
				}
				require.Contains(t, out, "dns example.com refused\ndns example.test refused\nabstract refused\n", out)
				require.Contains(t, out, "interfaces ['lo']\n", "only loopback in /proc/net/dev")
				require.NoError(t, udp.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
				_, from, err := udp.ReadFrom(make([]byte, 64))
				require.Error(t, err, "a UDP datagram from the sandbox reached the host (from %v)", from)
				select {
				case <-accepted:
					t.Fatal("a host listener accepted a connection from the sandbox")
				default:
				}
				require.Empty(t, p.requests(), "the script never used the proxy")
			})
			t.Run("the environment is the request's and the proxy's only", func(t *testing.T) {
				p := newTestProxy(t)
				res := run(t, r, sandbox.Request{Argv: []string{"/usr/bin/python3", "-c", "import os\nfor k, v in os.environ.items(): print(k + '=' + v)"},
					Env: []string{"PATH=/usr/bin:/bin", "HOME=/tmp", "HTTP_PROXY=http://caller.example:1", "NO_PROXY=localhost"}, Network: p.network()})
				require.Equal(t, 0, res.ExitCode, string(res.Stderr))
				proxy := "http://" + sandbox.ProxyAddr
				want := []string{"CURL_CA_BUNDLE=" + sandbox.CABundle, "HOME=/tmp", "HTTPS_PROXY=" + proxy, "HTTP_PROXY=" + proxy,
					"NODE_EXTRA_CA_CERTS=" + sandbox.NetDir + "/ca.pem", "NO_PROXY=", "PATH=/usr/bin:/bin", "PIP_CERT=" + sandbox.CABundle,
					"REQUESTS_CA_BUNDLE=" + sandbox.CABundle, "SSL_CERT_FILE=" + sandbox.CABundle, "http_proxy=" + proxy, "https_proxy=" + proxy, "no_proxy="}
				got := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
				// bwrap sets PWD (its --chdir), python coerces LC_CTYPE.
				got = slices.DeleteFunc(got, func(s string) bool {
					return strings.HasPrefix(s, "PWD=") || strings.HasPrefix(s, "LC_CTYPE=")
				})
				require.ElementsMatch(t, want, got)
				// Every process's, the forwarder's included.
				res = run(t, r, sandbox.Request{Argv: bash("cat /proc/[0-9]*/environ"), Network: newTestProxy(t).network()})
				require.Equal(t, 0, res.ExitCode, string(res.Stderr))
				require.Contains(t, string(res.Stdout), "HTTP_PROXY=")
				require.NotContains(t, string(res.Stdout), "fake-secret-for-egress-test")
			})
			t.Run("the program's status, stdin and output are its own", func(t *testing.T) {
				p := newTestProxy(t)
				res := run(t, r, sandbox.Request{Argv: bash("cat; echo err >&2; exit 7"), Stdin: []byte("in\n"), Network: p.network()})
				require.Equal(t, 7, res.ExitCode)
				require.Equal(t, "in\n", string(res.Stdout))
				require.Equal(t, "err\n", string(res.Stderr))
				res = run(t, r, sandbox.Request{Argv: bash("kill -9 $$"), Network: newTestProxy(t).network()})
				require.Equal(t, 128+9, res.ExitCode)
			})
			t.Run("a run without a network is as before", func(t *testing.T) {
				res := run(t, r, sandbox.Request{Argv: bash("env; ls -A " + sandbox.NetDir + " /etc/ssl/certs; cat /proc/net/dev | tail -n +3")})
				require.Equal(t, 0, res.ExitCode, string(res.Stderr))
				require.NotContains(t, string(res.Stdout), "PROXY")
				require.NotContains(t, string(res.Stdout), "proxy.sock")
				require.NotContains(t, string(res.Stdout), "ca-certificates.crt")
			})
		})
	}
}

// escapeScript tries every way out but the proxy and prints what happened.
const escapeScript = `import os, socket
port, uport = int(os.environ["TCP_PORT"]), int(os.environ["UDP_PORT"])
for host in os.environ["TARGETS"].split(","):
    try:
        socket.create_connection((host, port), timeout=3)
        print("tcp", host, "REACHED")
    except OSError as e:
        print("tcp", host, "refused", e)
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(b"escaped", (host, uport))
        print("udp", host, "sent")
    except OSError as e:
        print("udp", host, "refused", e)
for name in ["example.com", "example.test"]:
    try:
        socket.getaddrinfo(name, 443)
        print("dns", name, "REACHED")
    except OSError:
        print("dns", name, "refused")
try:
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(3)
    s.connect("\0" + os.environ["ABSTRACT"])
    print("abstract REACHED")
except OSError:
    print("abstract refused")
with open("/proc/net/dev") as f:
    print("interfaces", sorted(l.split(":")[0].strip() for l in f.readlines()[2:]))
`

// hostAddrs are the host's IPv4 addresses other than loopback.
func hostAddrs(t *testing.T) []string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	require.NoError(t, err)
	var out []string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			out = append(out, n.IP.String())
		}
	}
	return out
}

// systemBundle is the host's bundle of system roots.
func systemBundle(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	require.NoError(t, err, "the tests expect a Debian-family host")
	return data
}

func requireClosed(t *testing.T, c chan struct{}, msg string) {
	t.Helper()
	select {
	case <-c:
	default:
		t.Fatal(msg)
	}
}

// TestEgressRefusesBadNetworks: what cannot be a trust root or a proxy is
// refused before anything starts, naming the rule.
func TestEgressRefusesBadNetworks(t *testing.T) {
	r := runners(t)[0]
	key := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("x")})
	bad := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("not DER")})
	serve := func(l net.Listener) { <-make(chan struct{}) }
	for _, tc := range []struct {
		name string
		n    *sandbox.Network
		want string
	}{
		{"no proxy", &sandbox.Network{}, "Serve is required"},
		{"not PEM", &sandbox.Network{Serve: serve, CACertPEM: []byte("hello")}, "not a PEM block"},
		{"a private key", &sandbox.Network{Serve: serve, CACertPEM: key}, `"PRIVATE KEY" block; only CERTIFICATE`},
		{"garbage certificate", &sandbox.Network{Serve: serve, CACertPEM: bad}, "CACertPEM: x509"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Run(t.Context(), sandbox.Request{Argv: []string{"/usr/bin/true"}, Network: tc.n})
			require.ErrorContains(t, err, tc.want)
		})
	}
}
