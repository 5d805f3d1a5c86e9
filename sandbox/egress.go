package sandbox

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Network gives a run one way out: an HTTP proxy (CONNECT and absolute-URI
// requests) that the server serves on a unix socket made for this run
// alone. The sandbox keeps its own network namespace with nothing but
// loopback; the socket is mounted into it, and a forwarder started before
// the program (see forward.go) listens on ProxyAddr in the sandbox's
// loopback and relays each connection to the socket. A program that
// ignores the proxy environment reaches nothing: there is no route, no
// DNS, and no host network socket but this one. (A unix socket that the
// workspace or a bind happens to show stays reachable, as for every
// bubblewrap run: see docs/sandboxing.md.)
type Network struct {
	// Serve serves the proxy on l until l is closed. It is called in a
	// goroutine of its own before the program starts; l is closed once
	// the sandbox is gone. Every connection on l comes from this run, so
	// Serve may attribute what it sees to the run's call.
	Serve func(l net.Listener)
	// CACertPEM is an extra trust root (PEM certificates) installed in
	// the sandbox beside the system's, for hosts whose TLS the proxy
	// terminates; empty for none.
	CACertPEM []byte
}

// Paths and addresses inside a sandbox run with a Network.
const (
	// ProxyAddr is where the forwarder listens, in the sandbox's own
	// loopback; the proxy variables of the environment name it.
	ProxyAddr = "127.0.0.1:3128"
	// NetDir holds the proxy socket, the forwarder and the extra CA.
	NetDir = "/run/toolwarden-net"
	// CABundle is the trust store of a Network run: the host's system
	// roots and CACertPEM, at the path Debian-family systems and
	// OpenSSL's default configuration read.
	CABundle = "/etc/ssl/certs/ca-certificates.crt"
)

// Names inside NetDir, and the directory of the run's trust store.
const (
	proxySocketName = "proxy.sock"
	forwarderName   = "toolwarden-forward"
	caFileName      = "ca.pem"
	certsDir        = "/etc/ssl/certs"
)

// systemBundles are where hosts keep their system roots (the list Go's
// crypto/x509 reads), first found wins.
var systemBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/pki/tls/cacert.pem",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	"/etc/ssl/cert.pem",
}

// netRun is the host side of a run's network: its directory (mounted at
// NetDir), its trust store directory (mounted at certsDir) and the
// listener the proxy serves.
type netRun struct {
	dir, certs, forwarder string
	ln                    net.Listener
	served                chan struct{}
}

// checkNetwork refuses a Network that cannot work or carries something
// that is not a certificate, naming the rule.
func checkNetwork(n *Network) error {
	if n.Serve == nil {
		return errors.New("sandbox network: Serve is required (the proxy that is the run's only way out)")
	}
	rest := n.CACertPEM
	for len(bytes.TrimSpace(rest)) > 0 {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return errors.New("sandbox network: CACertPEM holds something that is not a PEM block")
		}
		if b.Type != "CERTIFICATE" {
			return fmt.Errorf("sandbox network: CACertPEM holds a %q block; only CERTIFICATE blocks are trust roots", b.Type)
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return fmt.Errorf("sandbox network: CACertPEM: %w", err)
		}
	}
	return nil
}

// openNetwork lays out runDir/net and runDir/certs and starts n.Serve on
// the run's socket. The forwarder is this very binary (forward.go).
func openNetwork(runDir string, n *Network) (*netRun, error) {
	if err := checkNetwork(n); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox network: find the forwarder (this binary): %w", err)
	}
	nr := &netRun{dir: filepath.Join(runDir, "net"), certs: filepath.Join(runDir, "certs"), forwarder: exe}
	if err := nr.writeFiles(n.CACertPEM); err != nil {
		return nil, err
	}
	if nr.ln, err = listenUnix(nr.dir, proxySocketName); err != nil {
		return nil, fmt.Errorf("sandbox network: %w", err)
	}
	nr.served = make(chan struct{})
	go func() {
		defer close(nr.served)
		n.Serve(nr.ln)
	}()
	return nr, nil
}

// writeFiles writes the extra CA, the combined trust store and the
// forwarder's mount point; the sandbox's user (nobody, as root) reads
// them through their mounts.
func (nr *netRun) writeFiles(ca []byte) error {
	for _, d := range []string{nr.dir, nr.certs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := os.Chmod(d, 0o755); err != nil {
			return err
		}
	}
	bundle := systemRoots()
	if len(ca) > 0 {
		if err := os.WriteFile(filepath.Join(nr.dir, caFileName), ca, 0o644); err != nil {
			return err
		}
		if len(bundle) > 0 && bundle[len(bundle)-1] != '\n' {
			bundle = append(bundle, '\n')
		}
		bundle = append(bundle, ca...)
	}
	if err := os.WriteFile(filepath.Join(nr.certs, filepath.Base(CABundle)), bundle, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(nr.dir, forwarderName), nil, 0o644)
}

// systemRoots returns the host's system bundle, nil when it has none.
func systemRoots() []byte {
	for _, p := range systemBundles {
		if data, err := os.ReadFile(p); err == nil {
			return data
		}
	}
	return nil
}

// maxSocketPath is the longest path a unix socket address holds.
const maxSocketPath = 107

// listenUnix listens on dir/name, open to every user (the sandbox's
// user, nobody as root, must connect; what guards the socket is the
// mount that shows it to this run alone). A path too long for a socket
// address is reached through the directory's descriptor.
func listenUnix(dir, name string) (net.Listener, error) {
	p := filepath.Join(dir, name)
	if len(p) > maxSocketPath {
		d, err := os.Open(dir)
		if err != nil {
			return nil, err
		}
		defer d.Close()
		p = "/proc/self/fd/" + strconv.Itoa(int(d.Fd())) + "/" + name
	}
	ln, err := net.Listen("unix", p)
	if err != nil {
		return nil, err
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false) // the run's directory goes as a whole
	if err := os.Chmod(filepath.Join(dir, name), 0o666); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// close stops the proxy's listener and waits for Serve to return.
func (nr *netRun) close() {
	if nr == nil || nr.ln == nil {
		return
	}
	nr.ln.Close()
	<-nr.served
}

// netEnv is env with the proxy and trust store variables of a Network run
// set (any the caller gave replaced). NO_PROXY is empty: loopback inside
// the sandbox holds nothing but the forwarder.
func netEnv(env []string, hasCA bool) []string {
	proxy := "http://" + ProxyAddr
	set := map[string]string{
		"HTTP_PROXY": proxy, "HTTPS_PROXY": proxy, "http_proxy": proxy, "https_proxy": proxy,
		"NO_PROXY": "", "no_proxy": "",
		"SSL_CERT_FILE": CABundle, "REQUESTS_CA_BUNDLE": CABundle, "CURL_CA_BUNDLE": CABundle, "PIP_CERT": CABundle,
	}
	if hasCA {
		set["NODE_EXTRA_CA_CERTS"] = NetDir + "/" + caFileName
	}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ours := set[k]; !ours {
			out = append(out, kv)
		}
	}
	for _, k := range netEnvOrder {
		if v, ok := set[k]; ok {
			out = append(out, k+"="+v)
		}
	}
	return out
}

var netEnvOrder = []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NO_PROXY", "no_proxy",
	"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "PIP_CERT", "NODE_EXTRA_CA_CERTS"}

// netArgv starts argv under the forwarder, which listens first.
func netArgv(argv []string) []string {
	return append([]string{NetDir + "/" + forwarderName, "--"}, argv...)
}

// bindMount is a read-only bind of a host path into the sandbox.
type bindMount struct{ src, dst string }

// mounts are the read-only binds of a Network run, in order (the
// forwarder's file lies inside NetDir's mount).
func (nr *netRun) mounts() []bindMount {
	if nr == nil {
		return nil
	}
	return []bindMount{{nr.dir, NetDir}, {nr.forwarder, NetDir + "/" + forwarderName}, {nr.certs, certsDir}}
}
