package egress

import (
	"crypto/x509"
	"fmt"
	"net/netip"
	"strings"

	"github.com/toolwarden/toolwarden/configs"
)

// Policy is one network block, compiled: what a call may reach and which
// credentials the proxy puts into its requests.
type Policy struct {
	key    string // the block's config key, for the rules errors name
	allows []configs.NetAllow
	creds  []credential
	roots  *x509.CertPool
	permit Permit
	dlp    configs.NetworkDLP // with defaults
}

// Permit says whether the caller of one call may connect to host:port
// beside the allow list (its net:connect capabilities); false refuses the
// connection by rule. host is lower-case, an IPv6 address bracketed.
type Permit func(host string, port uint16) (rule string, ok bool)

// WithPermit is p for the calls of one caller: a connection the allow
// list lets through is refused unless permit agrees too.
func (p *Policy) WithPermit(permit Permit) *Policy {
	q := *p
	q.permit = permit
	return &q
}

// credential is a configs.Credential with its value read.
type credential struct {
	rule        string // its config key
	host        string
	header      string
	placeholder string
	value       secret
}

// secret hides a credential's value from every format verb, so that no
// log line or error can print it by accident.
type secret struct{ v string }

func (secret) String() string   { return "[redacted]" }
func (secret) GoString() string { return "[redacted]" }

// NewPolicy compiles the network block found under key (exec.network,
// tools[3].network, upstreams[0].network). Credential values are read now,
// from getenv (the server's environment: os.Getenv) or their file.
func NewPolicy(key string, n configs.Network, getenv func(string) string) (*Policy, error) {
	p := &Policy{key: key, dlp: n.DLP.WithDefaults()}
	for i, e := range n.Allow {
		a, err := configs.ParseNetAllow(e)
		if err != nil {
			return nil, fmt.Errorf("%s.allow[%d]: %q: %w", key, i, e, err)
		}
		p.allows = append(p.allows, a)
	}
	for i, c := range n.Credentials {
		rule := fmt.Sprintf("%s.credentials[%d]", key, i)
		v, err := credentialValue(rule, c, getenv)
		if err != nil {
			return nil, err
		}
		p.creds = append(p.creds, credential{rule: rule, host: strings.ToLower(c.Host),
			header: c.Header, placeholder: c.Placeholder, value: secret{v}})
	}
	roots, err := n.UpstreamRoots()
	if err != nil {
		return nil, fmt.Errorf("%s.upstream_ca_file: %w", key, err)
	}
	p.roots = roots
	return p, nil
}

func credentialValue(rule string, c configs.Credential, getenv func(string) string) (string, error) {
	var v string
	if c.ValueEnv != "" {
		if v = getenv(c.ValueEnv); v == "" {
			return "", fmt.Errorf("%s.value_env: the variable %s is not set", rule, c.ValueEnv)
		}
	} else {
		// Read as every *_file secret is: a regular file of mode 0600 or
		// stricter, opened without waiting (a FIFO is refused).
		var err error
		if v, err = configs.ReadSecretFile(c.ValueFile); err != nil {
			return "", fmt.Errorf("%s.value_file: %w", rule, err)
		}
	}
	if v == "" || strings.ContainsAny(v, "\r\n\x00") {
		return "", fmt.Errorf("%s: the value is empty or holds a line break or NUL, which no header may carry", rule)
	}
	if strings.Contains(v, c.Placeholder) {
		return "", fmt.Errorf("%s.placeholder: the value contains its own placeholder", rule)
	}
	return v, nil
}

// rule is the key of the allow list, which refusals name.
func (p *Policy) rule() string { return p.key + ".allow" }

// allowsName says whether host:port is listed, and whether by its exact
// name (which may then resolve to an internal address).
func (p *Policy) allowsName(host string, port uint16) (listed, exact bool) {
	for _, a := range p.allows {
		if a.Match(host, port) {
			listed = true
			exact = exact || !a.Wildcard
		}
	}
	return listed, exact
}

func (p *Policy) allowsIP(ip netip.Addr, port uint16) bool {
	for _, a := range p.allows {
		if a.Addr.IsValid() && a.Addr == ip && a.Port == port {
			return true
		}
	}
	return false
}

// brokered is the credentials to put into requests to host.
func (p *Policy) brokered(host string) []credential {
	var out []credential
	for _, c := range p.creds {
		if c.host == host {
			out = append(out, c)
		}
	}
	return out
}

// check decides a target's addresses: an IP only when listed exactly, a
// name when listed and every address it resolves to may be reached by it.
func (p *Policy) check(t target, resolved []netip.Addr) error {
	if t.ip.IsValid() {
		if !p.allowsIP(t.ip, t.port) {
			return refusal(p.rule(), "address %s is not listed exactly", t)
		}
		return p.permitted(t)
	}
	listed, exact := p.allowsName(t.host, t.port)
	if !listed {
		return refusal(p.rule(), "host not allowed: %s", t)
	}
	if err := p.permitted(t); err != nil {
		return err
	}
	if len(resolved) == 0 {
		return refusal(RuleResolve, "%s does not resolve", t.host)
	}
	for _, a := range resolved {
		switch r, what := classify(a); {
		case r == never, r == internal && !exact:
			return refusal(p.rule(), "%s resolves to %s, %s", t.host, a.Unmap(), what)
		}
	}
	return nil
}

// permitted asks the caller's permit about an allowed target.
func (p *Policy) permitted(t target) error {
	if p.permit == nil {
		return nil
	}
	host := t.host
	if t.ip.Is6() {
		host = "[" + host + "]"
	}
	if rule, ok := p.permit(host, t.port); !ok {
		return refusal(rule, "this caller may not connect to %s: net:connect:%s:%d is not granted", t, host, t.port)
	}
	return nil
}
