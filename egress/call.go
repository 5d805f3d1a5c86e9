package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// maxHead bounds a request's line and headers.
const maxHead = 64 << 10

// Call is the proxy as one call (or one sandboxed server) sees it: its
// policy, limits and call ID, on the listeners it serves.
type Call struct {
	p      *Proxy
	id     string
	pol    *Policy
	dlp    *dlp
	lim    Limits
	ctx    context.Context
	cancel context.CancelFunc

	conns    atomic.Int64 // open connections
	upLeft   atomic.Int64 // byte budgets
	downLeft atomic.Int64

	// transport forwards brokered and plain-http requests, dialling
	// through check.
	transport *http.Transport

	mu     sync.Mutex
	closed bool
	open   map[interface{ Close() error }]struct{}
	wg     sync.WaitGroup
}

// Call makes the handle of one call: callID goes into its events, pol
// says what it may reach, lim bounds it. Serve it on the listeners the
// sandbox reaches; Close it when the call ends.
func (p *Proxy) Call(callID string, pol *Policy, lim Limits) *Call {
	lim = lim.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	c := &Call{p: p, id: callID, pol: pol, dlp: &dlp{conf: pol.dlp, scan: p.opts.Scan}, lim: lim, ctx: ctx, cancel: cancel,
		open: map[interface{ Close() error }]struct{}{}}
	c.upLeft.Store(lim.MaxBytesUp)
	c.downLeft.Store(lim.MaxBytesDown)
	c.transport = &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			t, err := parseTarget(addr)
			if err != nil {
				return nil, refusal(RuleTarget, "%v", err)
			}
			conn, ip, err := c.dial(ctx, t)
			if err == nil {
				noteAddr(ctx, ip.String())
			}
			return conn, err
		},
		TLSClientConfig:     &tls.Config{RootCAs: pol.roots, MinVersion: tls.VersionTLS12},
		DisableCompression:  true,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     lim.IdleTimeout,
	}
	go c.watch()
	return c
}

// watch enforces the idle and total timeouts.
func (c *Call) watch() {
	tick := time.NewTicker(max(c.lim.IdleTimeout/4, 10*time.Millisecond))
	defer tick.Stop()
	var total <-chan time.Time
	if c.lim.TotalTimeout > 0 {
		t := time.NewTimer(c.lim.TotalTimeout)
		defer t.Stop()
		total = t.C
	}
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-total:
			c.closeAll(RuleTotal, true)
			return
		case now := <-tick.C:
			c.mu.Lock()
			for x := range c.open {
				if f, ok := x.(*flow); ok && now.Sub(f.lastActive()) > c.lim.IdleTimeout {
					go f.cut(RuleIdle)
				}
			}
			c.mu.Unlock()
		}
	}
}

// resolve looks t up and checks every address it has; the caller
// connects to one of these, never looking the name up again (a
// rebinding DNS server gets one answer, and it is the one checked).
func (c *Call) resolve(ctx context.Context, t target) ([]netip.Addr, error) {
	if t.ip.IsValid() {
		return []netip.Addr{t.ip}, c.pol.check(t, nil)
	}
	if listed, _ := c.pol.allowsName(t.host, t.port); !listed {
		return nil, c.pol.check(t, nil)
	}
	if err := c.pol.permitted(t); err != nil {
		return nil, err // refused before the name is looked up
	}
	if base := c.pol.wildcardBase(t.host, t.port); base != "" && c.dlp.on() {
		if err := c.dlp.hostname(t.host, base); err != nil {
			return nil, err // the lookup itself would carry the data out
		}
	}
	addrs, err := c.p.opts.Resolver.LookupNetIP(ctx, "ip", t.host)
	if err != nil {
		return nil, refusal(RuleResolve, "%s does not resolve", t.host)
	}
	return addrs, c.pol.check(t, addrs)
}

// dial connects to the first checked address of t that answers.
func (c *Call) dial(ctx context.Context, t target) (net.Conn, netip.Addr, error) {
	addrs, err := c.resolve(ctx, t)
	if err != nil {
		return nil, netip.Addr{}, err
	}
	var last error
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a.Unmap(), t.port)
		conn, err := c.p.opts.Dial(ctx, "tcp", ap.String())
		if err == nil {
			return conn, ap.Addr(), nil
		}
		last = err
	}
	return nil, netip.Addr{}, refusal(RuleDial, "cannot connect to %s: %v", t, last)
}

// handle serves one connection of the sandbox: one CONNECT tunnel, or
// plain http requests.
func (c *Call) handle(raw net.Conn) {
	f := newFlow(c, raw)
	if !c.track(f) {
		raw.Close()
		return
	}
	defer c.untrack(f)
	defer func() {
		f.Close()
		f.mu.Lock()
		ev := f.ev
		if f.rule != "" && ev.Rule == "" {
			ev.Rule = f.rule
		}
		f.mu.Unlock()
		ev.Duration = time.Since(ev.Start)
		ev.BytesUp, ev.BytesDown = f.up.Load(), f.down.Load()
		c.p.opts.OnEvent(ev)
	}()
	// A connection holds a slot from its first byte: one that never ends
	// its request head holds it too, so a slowloris cannot pass the cap.
	if err := c.admit(); err != nil {
		// Answer after the request head (or lingerTime, holding no
		// slot), so that the client's write of it does not fail first.
		raw.SetReadDeadline(time.Now().Add(lingerTime))
		http.ReadRequest(bufio.NewReader(io.LimitReader(raw, maxHead)))
		f.refuse(err)
		return
	}
	defer c.release()
	head := &io.LimitedReader{R: f, N: maxHead}
	br := bufio.NewReader(head)
	req, err := http.ReadRequest(br)
	if err != nil {
		f.refuse(refusal(RuleMethod, "not an HTTP proxy request: %s", truncate(err.Error())))
		return
	}
	head.N = 1 << 62
	if req.Method == http.MethodConnect {
		c.connect(f, br, req)
		return
	}
	c.plain(f, req)
}

// lingerTime bounds how long a connection over MaxConns is read before
// it is answered.
const lingerTime = 5 * time.Second

// admit counts a connection against MaxConns; release undoes it.
func (c *Call) admit() error {
	if n := c.conns.Add(1); n > int64(c.lim.MaxConns) {
		c.conns.Add(-1)
		return refusal(RuleMaxConns, "more than %d connections at once", c.lim.MaxConns)
	}
	return nil
}

func (c *Call) release() { c.conns.Add(-1) }

// take spends n bytes of a budget and says how many fit.
func take(left *atomic.Int64, n int) int {
	rest := left.Add(-int64(n))
	if rest >= 0 {
		return n
	}
	if over := -rest; over < int64(n) {
		return n - int(over)
	}
	return 0
}

// writeRefusal answers a refused request: 403 (502 when the host could
// not be reached) with the reason and the rule in the body, the rule in
// X-Toolwarden-Rule and a data-loss finding in X-Toolwarden-Finding.
func writeRefusal(w io.Writer, err error) {
	status := http.StatusForbidden
	rule := ruleOf(err, RuleDial)
	if rule == RuleDial || rule == RuleResolve {
		status = http.StatusBadGateway
	}
	body := err.Error() + "\n"
	extra := ""
	if id := findingOf(err); id != "" {
		extra = "X-Toolwarden-Finding: " + id + "\r\n"
	}
	fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nX-Toolwarden-Rule: %s\r\n%sConnection: close\r\nContent-Length: %s\r\n\r\n%s",
		status, http.StatusText(status), rule, extra, strconv.Itoa(len(body)), body)
}
