package egress

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// broker serves a CONNECT to a host with credentials: it terminates TLS
// with a leaf of the ephemeral CA, puts each credential's value into its
// header in place of the placeholder, and sends the request on over TLS
// verified against the system's roots (and upstream_ca_file).
func (c *Call) broker(f *flow, t target, creds []credential, replay io.Reader) {
	leaf, err := c.p.ca.leaf(t.host)
	if err != nil {
		f.ev.Allowed, f.ev.Rule = false, RuleTLSOnly
		return
	}
	tc := tls.Server(&replayConn{Reader: replay, flow: f}, &tls.Config{
		Certificates: []tls.Certificate{*leaf},
		NextProtos:   []string{"http/1.1"},
		MinVersion:   tls.VersionTLS12,
	})
	if err := tc.HandshakeContext(f.ctx); err != nil {
		return
	}
	head := &io.LimitedReader{R: tc, N: maxHead}
	br := bufio.NewReader(head)
	for {
		head.N = maxHead
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		head.N = 1 << 62
		resp, err := c.forwardBrokered(f, t, creds, req)
		if err != nil {
			f.ev.Allowed, f.ev.Rule, f.ev.Finding = false, ruleOf(err, RuleDial), findingOf(err)
			writeRefusal(tc, err)
			return
		}
		werr := resp.Write(tc)
		resp.Body.Close()
		if g, ok := resp.Body.(*guard); ok && g.tripped {
			f.ev.Allowed, f.ev.Rule = false, ruleOf(g.hit, "")
		}
		if werr != nil || req.Close || resp.Close {
			return
		}
	}
}

func (c *Call) forwardBrokered(f *flow, t target, creds []credential, req *http.Request) (*http.Response, error) {
	if !sameHost(req.Host, t, 443) {
		return nil, refusal(RuleTarget, "Host %q is not the CONNECT's host %s", truncate(req.Host), t)
	}
	if err := c.checkDLP(req); err != nil {
		return nil, err // before the credential is put in: its value is never scanned
	}
	injected, err := c.injectHeaders(req.Header, t.host)
	if err != nil {
		return nil, err
	}
	if err := c.placeholderIn(req.RequestURI); err != nil {
		return nil, err
	}
	out := outgoing(f, req, "https", t)
	// A compressed response would hide an echoed value from the guard.
	out.Header.Set("Accept-Encoding", "identity")
	body := newGuard(req.Body, c.placeholders(), refusal(creds[0].rule, "a credential placeholder in the request body; placeholders go in their header only"))
	out.Body = body
	var scanned *dlpBody
	if c.dlp.on() {
		scanned = newDLPBody(body, c.dlp)
		out.Body = scanned
	}
	resp, err := c.transport.RoundTrip(out)
	if hit := tripped(body, scanned); hit != nil {
		if err == nil {
			resp.Body.Close()
		}
		return nil, hit
	}
	if err != nil {
		return nil, carry(err, refusal(ruleOf(err, RuleDial), "%s: %v", t, unwrapRefusal(err)))
	}
	f.ev.CredentialInjected = f.ev.CredentialInjected || injected
	if err := c.checkResponse(resp, creds[0].rule); err != nil {
		resp.Body.Close()
		return nil, err
	}
	resp.Body = newGuard(resp.Body, c.values(), refusal(creds[0].rule, "the response carries a credential's value; cut"))
	return resp, nil
}

// checkResponse refuses a brokered response that could hand a value back
// past the body's guard: in its status line, a header's name or value,
// or an encoded body (the guard sees plain bytes only). Its trailers,
// which arrive after the body, are dropped.
func (c *Call) checkResponse(resp *http.Response, rule string) error {
	for _, cr := range c.pol.creds {
		if strings.Contains(resp.Status, cr.value.v) {
			return refusal(cr.rule, "the response carries the credential's value in its status line")
		}
		for name, vs := range resp.Header {
			for _, v := range append([]string{name}, vs...) {
				if strings.Contains(v, cr.value.v) {
					return refusal(cr.rule, "the response carries the credential's value in a header")
				}
			}
		}
	}
	for _, ce := range resp.Header.Values("Content-Encoding") {
		for _, tok := range strings.Split(ce, ",") {
			if tok = strings.TrimSpace(tok); tok != "" && !strings.EqualFold(tok, "identity") {
				return refusal(rule, "the response is %s-encoded, which hides a credential's value from the check; the proxy asks brokered hosts for identity", truncate(tok))
			}
		}
	}
	resp.Trailer = nil
	resp.Header.Del("Trailer")
	return nil
}

// injectHeaders replaces, for host, each credential's placeholder in its
// header with the value; a placeholder anywhere else is refused.
func (c *Call) injectHeaders(h http.Header, host string) (bool, error) {
	injected := false
	for name, vs := range h {
		for i, v := range vs {
			repl := v
			for _, cr := range c.pol.creds {
				if !strings.Contains(v, cr.placeholder) {
					continue
				}
				if cr.host != host || http.CanonicalHeaderKey(cr.header) != name {
					return false, refusal(cr.rule, "the placeholder %s may only be sent in the %s header to %s", cr.placeholder, cr.header, cr.host)
				}
				repl = strings.ReplaceAll(repl, cr.placeholder, cr.value.v)
				injected = true
			}
			vs[i] = repl
		}
	}
	return injected, nil
}

// placeholderIn refuses a request target carrying a placeholder, as sent
// or percent-decoded.
func (c *Call) placeholderIn(uri string) error {
	dec, _ := url.PathUnescape(uri)
	for _, cr := range c.pol.creds {
		if strings.Contains(uri, cr.placeholder) || strings.Contains(dec, cr.placeholder) {
			return refusal(cr.rule, "the placeholder %s may only be sent in the %s header to %s", cr.placeholder, cr.header, cr.host)
		}
	}
	return nil
}

func (c *Call) placeholders() []string {
	var out []string
	for _, cr := range c.pol.creds {
		out = append(out, cr.placeholder)
	}
	return out
}

func (c *Call) values() []string {
	var out []string
	for _, cr := range c.pol.creds {
		out = append(out, cr.value.v)
	}
	return out
}

// outgoing is req as sent on to t: absolute URL, no hop-by-hop headers,
// no trailers (they arrive after the body, past every check).
func outgoing(f *flow, req *http.Request, scheme string, t target) *http.Request {
	out := req.Clone(f.ctx)
	out.RequestURI = ""
	out.Trailer = nil
	out.URL.Scheme, out.URL.Host = scheme, t.String()
	for _, tok := range strings.Split(req.Header.Get("Connection"), ",") {
		if tok = strings.TrimSpace(tok); tok != "" {
			out.Header.Del(tok)
		}
	}
	for _, h := range []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authorization",
		"Proxy-Authenticate", "Te", "Trailer", "Transfer-Encoding", "Upgrade"} {
		out.Header.Del(h)
	}
	return out
}

// sameHost says whether a Host header names t (its port may be left out
// when it is the scheme's default).
func sameHost(host string, t target, defaultPort uint16) bool {
	if !strings.Contains(host, ":") || strings.HasSuffix(host, "]") {
		host = net.JoinHostPort(strings.Trim(host, "[]"), itoa(defaultPort))
	}
	h, err := parseTarget(host)
	return err == nil && h.host == t.host && h.port == t.port
}

// unwrapRefusal keeps a transport error's message free of the request.
func unwrapRefusal(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// replayConn is the client side of a brokered CONNECT: the recorded
// ClientHello, then the rest, through the metered flow.
type replayConn struct {
	io.Reader
	*flow
}

func (r *replayConn) Read(p []byte) (int, error) { return r.Reader.Read(p) }
