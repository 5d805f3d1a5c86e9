package configs

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/toolwarden/toolwarden/internal/lazyregexp"
)

// Network is the network: block of exec, a declared cli tool or an
// upstream. Empty, the sandbox has no network at all; otherwise its only
// way out is the server's egress proxy, which connects to the listed
// host:port pairs and nothing else (docs/egress.md).
type Network struct {
	// Allow lists "host:port" entries: an exact DNS name, "*.example.com"
	// (one or more labels below example.com, never example.com itself), or
	// an exact IP address ("10.0.0.5:80", "[fd00::5]:443").
	Allow []string `mapstructure:"allow" yaml:"allow"`
	// Credentials are injected by the proxy into requests to their host;
	// the sandbox only ever holds the placeholder.
	Credentials []Credential `mapstructure:"credentials" yaml:"credentials"`
	// UpstreamCAFile is a PEM file of extra roots the proxy trusts toward
	// brokered hosts, beside the system's.
	UpstreamCAFile string `mapstructure:"upstream_ca_file" yaml:"upstream_ca_file"`
	// DLP is what the proxy looks for in the requests it can read and in
	// the names it is asked for; on by default (docs/egress.md).
	DLP NetworkDLP `mapstructure:"dlp" yaml:"dlp"`
}

// NetworkDLP tunes the egress proxy's data-loss checks of one block. The
// zero value is the default: every check on.
type NetworkDLP struct {
	// Off turns every check off for the block: a widening, logged.
	Off bool `mapstructure:"off" yaml:"off"`
	// MaxBodyBytes is how much of a request body is scanned; a longer
	// body is refused rather than passed on unscanned. Default 8 MiB.
	MaxBodyBytes int64 `mapstructure:"max_body_bytes" yaml:"max_body_bytes"`
	// URLEntropy is the entropy, in bits per character, from which a path
	// segment or query value of 24 or more characters mixing upper case,
	// lower case and digits is refused as encoded data. Default 4.5; a
	// negative value turns the check off.
	URLEntropy float64 `mapstructure:"url_entropy" yaml:"url_entropy"`
	// Hostnames bound the labels a name may have below the domain of the
	// wildcard entry that allows it.
	Hostnames HostnameDLP `mapstructure:"hostnames" yaml:"hostnames"`
}

// HostnameDLP bounds the labels below a wildcard entry's domain: "a.b" in
// a.b.example.com allowed by *.example.com. Names allowed by an exact
// entry are not checked: nothing in them is the sandbox's choice.
type HostnameDLP struct {
	// MaxLabels is how many labels may sit below the domain; default 3.
	MaxLabels int `mapstructure:"max_labels" yaml:"max_labels"`
	// Entropy is the entropy, in bits per character, from which a label
	// of 20 or more letters and digits (both) is refused as encoded data;
	// default 3.8, negative turns the check off. Hex labels of 16 or more
	// digits, base32 labels of 16 or more, and hex labels that decode to
	// text are refused whatever this says.
	Entropy float64 `mapstructure:"entropy" yaml:"entropy"`
}

// DLP defaults (NetworkDLP's zero fields).
const (
	DefaultDLPMaxBodyBytes      = 8 << 20
	DefaultDLPURLEntropy        = 4.5
	DefaultDLPHostnameMaxLabels = 3
	DefaultDLPHostnameEntropy   = 3.8
)

// WithDefaults is d with every zero field at its default.
func (d NetworkDLP) WithDefaults() NetworkDLP {
	if d.MaxBodyBytes <= 0 {
		d.MaxBodyBytes = DefaultDLPMaxBodyBytes
	}
	if d.URLEntropy == 0 {
		d.URLEntropy = DefaultDLPURLEntropy
	}
	if d.Hostnames.MaxLabels <= 0 {
		d.Hostnames.MaxLabels = DefaultDLPHostnameMaxLabels
	}
	if d.Hostnames.Entropy == 0 {
		d.Hostnames.Entropy = DefaultDLPHostnameEntropy
	}
	return d
}

// Credential is one secret the egress proxy puts into one header of the
// requests to one host, in place of Placeholder.
type Credential struct {
	Host   string `mapstructure:"host" yaml:"host"`
	Header string `mapstructure:"header" yaml:"header"`
	// ValueEnv names the variable of the server's environment holding the
	// value; ValueFile is a file holding it (one trailing newline is
	// dropped). Exactly one is set.
	ValueEnv  string `mapstructure:"value_env" yaml:"value_env"`
	ValueFile string `mapstructure:"value_file" yaml:"value_file"`
	// Placeholder is what the sandbox sees instead of the value.
	Placeholder string `mapstructure:"placeholder" yaml:"placeholder"`
}

// NetAllow is one parsed entry of Network.Allow.
type NetAllow struct {
	// Host is the lower-case DNS name, without "*." for a wildcard; empty
	// for an IP entry.
	Host string
	// Wildcard matches the names below Host (one or more labels).
	Wildcard bool
	// Addr is the IP of an exact-IP entry.
	Addr netip.Addr
	Port uint16
}

// placeholderForm keeps placeholders long and distinctive enough that
// they do not occur by chance in ordinary traffic.
var placeholderForm = lazyregexp.New(`^[A-Za-z0-9_-]{8,128}$`)

// Enabled says whether the block grants any network.
func (n Network) Enabled() bool { return len(n.Allow) > 0 }

// ParseNetAllow parses one allow entry. It refuses anything that is not a
// plain DNS name, a "*." wildcard of one, or a plain IP address, with a
// port: the same rule the proxy applies to the hosts it is asked for.
func ParseNetAllow(entry string) (NetAllow, error) {
	host, port, err := SplitHostPort(entry)
	if err != nil {
		return NetAllow{}, err
	}
	if name, ok := strings.CutPrefix(host, "*."); ok {
		if err := CheckHostName(name); err != nil {
			return NetAllow{}, err
		}
		if !strings.Contains(name, ".") {
			return NetAllow{}, fmt.Errorf("a wildcard must sit below a domain of at least two labels (*.example.com), not *.%s", name)
		}
		return NetAllow{Host: strings.ToLower(name), Wildcard: true, Port: port}, nil
	}
	if a, err := ParseHostIP(host); err == nil {
		return NetAllow{Addr: a, Port: port}, nil
	} else if !errors.Is(err, errNotIP) {
		return NetAllow{}, err
	}
	if err := CheckHostName(host); err != nil {
		return NetAllow{}, err
	}
	return NetAllow{Host: strings.ToLower(host), Port: port}, nil
}

// SplitHostPort splits "host:port" ("[v6]:port" for IPv6) and checks the
// port is a decimal number in 1..65535.
func SplitHostPort(hostport string) (string, uint16, error) {
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", 0, fmt.Errorf("not host:port: %w", err)
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || n == 0 || p[0] == '0' {
		return "", 0, fmt.Errorf("port %q is not a number in 1..65535", p)
	}
	return host, uint16(n), nil
}

var errNotIP = errors.New("not an IP address")

// ParseHostIP parses host as a plain IP address in its standard form
// (dotted-quad IPv4 or IPv6 without zone). IPv4-mapped IPv6 addresses are
// refused: they name an IPv4 host in a second spelling. It returns an
// error wrapping errNotIP when host does not look like an address at all.
func ParseHostIP(host string) (netip.Addr, error) {
	a, err := netip.ParseAddr(host)
	if err != nil {
		if strings.Contains(host, ":") {
			return netip.Addr{}, fmt.Errorf("%q is not a plain IPv6 address", host)
		}
		return netip.Addr{}, errNotIP
	}
	switch {
	case a.Zone() != "":
		return netip.Addr{}, fmt.Errorf("%q carries an IPv6 zone", host)
	case a.Is4In6():
		return netip.Addr{}, fmt.Errorf("%q is an IPv4-mapped IPv6 address; write the IPv4 address", host)
	}
	return a, nil
}

// CheckHostName accepts a plain DNS name: letters, digits and hyphens in
// labels of 1..63, at most 253 in all, no trailing dot, and a last label
// that starts with a letter. The last rule is what refuses the numeric
// spellings of addresses resolvers still accept (2130706433, 0177.0.0.1,
// 0x7f.1, 127.1): none of them is a DNS name.
func CheckHostName(name string) error {
	if name == "" || len(name) > 253 {
		return fmt.Errorf("%q is not a DNS name of 1..253 characters", name)
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if !validLabel(l) {
			return fmt.Errorf("%q is not a plain DNS name (letters, digits and hyphens in dot-separated labels, no trailing dot)", name)
		}
	}
	last := labels[len(labels)-1]
	if c := last[0] | 0x20; c < 'a' || c > 'z' {
		return fmt.Errorf("%q is not a DNS name: its last label does not start with a letter (a numeric spelling of an address?)", name)
	}
	return nil
}

func validLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for _, c := range []byte(l) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// Match reports whether the entry allows host (lower-case) and port.
func (a NetAllow) Match(host string, port uint16) bool {
	if a.Port != port || a.Addr.IsValid() {
		return false
	}
	if a.Wildcard {
		return strings.HasSuffix(host, "."+a.Host)
	}
	return host == a.Host
}

// validate checks the block under key (exec.network, tools[3].network,
// upstreams[0].network), naming the entry in every error.
func (n Network) validate(key string, add func(string, string, ...any)) {
	var allows []NetAllow
	for i, e := range n.Allow {
		a, err := ParseNetAllow(e)
		if err != nil {
			add(fmt.Sprintf("%s.allow[%d]", key, i), "%q: %v", e, err)
			continue
		}
		allows = append(allows, a)
	}
	seen := map[string]bool{}
	for i, c := range n.Credentials {
		c.validate(fmt.Sprintf("%s.credentials[%d]", key, i), allows, seen, add)
	}
	if n.DLP.MaxBodyBytes < 0 {
		add(key+".dlp.max_body_bytes", "%d is negative (0 means the default, %d)", n.DLP.MaxBodyBytes, DefaultDLPMaxBodyBytes)
	}
	if n.DLP.Hostnames.MaxLabels < 0 {
		add(key+".dlp.hostnames.max_labels", "%d is negative (0 means the default, %d)", n.DLP.Hostnames.MaxLabels, DefaultDLPHostnameMaxLabels)
	}
	if f := n.UpstreamCAFile; f != "" {
		if _, err := n.UpstreamRoots(); err != nil {
			add(key+".upstream_ca_file", "%v", err)
		} else if !filepath.IsAbs(f) {
			add(key+".upstream_ca_file", "%q must be an absolute path", f)
		}
	}
}

func (c Credential) validate(key string, allows []NetAllow, seen map[string]bool, add func(string, string, ...any)) {
	if err := CheckHostName(c.Host); err != nil {
		add(key+".host", "%v", err)
	} else if !hostListed(allows, strings.ToLower(c.Host)) {
		add(key+".host", "%q is not in the allow list on any port", c.Host)
	}
	if !headerName.MatchString(c.Header) {
		add(key+".header", "%q is not an HTTP header name", c.Header)
	}
	switch {
	case (c.ValueEnv == "") == (c.ValueFile == ""):
		add(key, "set exactly one of value_env and value_file")
	case c.ValueEnv != "" && !envVarName.MatchString(c.ValueEnv):
		add(key+".value_env", "%q is not an environment variable name (the value is never given literally)", c.ValueEnv)
	case c.ValueFile != "":
		checkSecretPath(add, key+".value_file", c.ValueFile)
	}
	if !placeholderForm.MatchString(c.Placeholder) {
		add(key+".placeholder", "%q must be 8..128 letters, digits, _ or - (distinct from ordinary traffic)", c.Placeholder)
	} else if seen[c.Placeholder] {
		add(key+".placeholder", "%q is also the placeholder of another credential", c.Placeholder)
	}
	seen[c.Placeholder] = true
	hh := strings.ToLower(c.Host) + " " + strings.ToLower(c.Header)
	if seen[hh] {
		add(key, "%s of %s is also set by another credential", c.Header, c.Host)
	}
	seen[hh] = true
}

func hostListed(allows []NetAllow, host string) bool {
	for _, a := range allows {
		if !a.Addr.IsValid() && (a.Host == host || a.Wildcard && strings.HasSuffix(host, "."+a.Host)) {
			return true
		}
	}
	return false
}

// UpstreamRoots is the system's root pool plus UpstreamCAFile's
// certificates.
func (n Network) UpstreamRoots() (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if n.UpstreamCAFile == "" {
		return pool, nil
	}
	data, err := os.ReadFile(n.UpstreamCAFile)
	if err != nil {
		return nil, err
	}
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s holds no PEM certificate", n.UpstreamCAFile)
	}
	return pool, nil
}

// networkWidenings says what a network block opens: any allowlist is
// wider than the default of no network.
func networkWidenings(key, origin string, n Network) []string {
	if !n.Enabled() {
		return nil
	}
	out := []string{fmt.Sprintf("%s.allow opens the sandbox's network to %v through the egress proxy (from %s)", key, n.Allow, origin)}
	for _, c := range n.Credentials {
		out = append(out, fmt.Sprintf("%s.credentials: the egress proxy puts the value of %s into the %s header of requests to %s", key, credentialSource(c), c.Header, c.Host))
	}
	if n.DLP.Off {
		out = append(out, fmt.Sprintf("%s.dlp.off: the egress proxy lets secrets and encoded data out in the requests and names it can read (from %s)", key, origin))
	}
	return out
}

func credentialSource(c Credential) string {
	if c.ValueEnv != "" {
		return "the variable " + c.ValueEnv
	}
	return "the file " + c.ValueFile
}
