// Package egresstest starts what egress tests connect to: HTTPS servers
// on loopback with certificates of a test CA, and a resolver answering
// from a map, so that no test ever reaches an outside address.
package egresstest

import (
	"context"
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
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// CA is a test certificate authority.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA certificate; File holds it, in a test directory.
	PEM  []byte
	File string
}

// NewCA makes a CA valid for the test.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key := must(t, func() (*ecdsa.PrivateKey, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) })
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "egresstest CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	der := must(t, func() ([]byte, error) { return x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key) })
	ca := &CA{cert: must(t, func() (*x509.Certificate, error) { return x509.ParseCertificate(der) }), key: key,
		PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	ca.File = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca.File, ca.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return ca
}

// Pool is a pool of the CA alone.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// Leaf is a server certificate for names (DNS names or IPs).
func (ca *CA) Leaf(t testing.TB, names ...string) tls.Certificate {
	t.Helper()
	key := must(t, func() (*ecdsa.PrivateKey, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) })
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: names[0]},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der := must(t, func() ([]byte, error) {
		return x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	})
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// Server starts an HTTPS server on 127.0.0.1 with a leaf of ca for names,
// closed at the end of the test. Its port is Port(srv).
func (ca *CA) Server(t testing.TB, h http.Handler, names ...string) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Leaf(t, names...)}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// Port is a test server's port.
func Port(srv *httptest.Server) string {
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return port
}

// Resolver answers from a map of name to addresses; any other name does
// not resolve.
type Resolver map[string][]string

// LookupNetIP implements egress.Resolver.
func (r Resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	addrs, ok := r[strings.ToLower(host)]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, a := range addrs {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

func must[T any](t testing.TB, f func() (T, error)) T {
	t.Helper()
	v, err := f()
	if err != nil {
		t.Fatal(fmt.Errorf("egresstest: %w", err))
	}
	return v
}
