package egress

import (
	"net/http"
	"strconv"
)

// plain serves an absolute-URI http:// request: the same checks as a
// CONNECT, one request per connection. A brokered host is refused here:
// credentials are sent over TLS only.
func (c *Call) plain(f *flow, req *http.Request) {
	ev := &f.ev
	auth, err := requestAuthority(req.RequestURI)
	if err != nil {
		f.refuse(refusal(RuleMethod, "%v", err))
		return
	}
	t, err := parseTarget(auth)
	if err != nil {
		ev.Host = truncate(auth)
		f.refuse(refusal(RuleTarget, "%q is not a plain DNS name or IP address with a port: %v", truncate(auth), err))
		return
	}
	ev.Host, ev.Port = t.host, t.port
	if err := c.checkPlain(req, t); err != nil {
		f.refuse(err)
		return
	}
	out := outgoing(f, req, "http", t)
	out.Close = true
	body := newGuard(req.Body, c.placeholders(), refusal(RuleTarget, "a credential placeholder in a plain http request"))
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
		f.refuse(hit)
		return
	}
	if err != nil {
		f.refuse(carry(err, refusal(ruleOf(err, RuleDial), "%s: %v", t, unwrapRefusal(err))))
		return
	}
	defer resp.Body.Close()
	ev.Allowed = true
	resp.Close = true
	resp.Write(f)
}

func (c *Call) checkPlain(req *http.Request, t target) error {
	if !sameHost(req.Host, t, 80) {
		return refusal(RuleTarget, "Host %q is not the request's host %s", truncate(req.Host), t)
	}
	if !t.ip.IsValid() {
		if creds := c.pol.brokered(t.host); len(creds) > 0 {
			return refusal(creds[0].rule, "credentials for %s are sent over TLS only: use https", t.host)
		}
	}
	if err := c.placeholderIn(req.RequestURI); err != nil {
		return err
	}
	if err := c.checkDLP(req); err != nil {
		return err
	}
	for _, vs := range req.Header {
		for _, v := range vs {
			if err := c.placeholderIn(v); err != nil {
				return err
			}
		}
	}
	return nil
}

func itoa(p uint16) string { return strconv.Itoa(int(p)) }
