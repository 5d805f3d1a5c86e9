package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"time"
)

// Resolver looks names up; *net.Resolver is one. Tests inject their own.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure a Proxy; every field has a default.
type Options struct {
	// Resolver defaults to net.DefaultResolver.
	Resolver Resolver
	// Dial connects to an address the proxy checked ("ip:port"); it
	// defaults to a net.Dialer with a 10 s timeout.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// OnEvent receives one Event per connection, when it ends. It must
	// not block for long: it runs on the connection's goroutine.
	OnEvent func(Event)
	// Scan finds secrets for the data-loss checks (dlp.go); nil leaves
	// those checks to the proxy's own rules.
	Scan Scanner
	// CAValidity is how long the ephemeral CA is valid; default 7 days.
	// The server makes a new one at each start.
	CAValidity time.Duration
}

// Proxy holds what the calls of one server share: the ephemeral CA, the
// resolver and the event sink.
type Proxy struct {
	opts Options
	ca   *authority
}

// New makes a proxy and its ephemeral CA (ECDSA P-256, in memory only).
func New(o Options) (*Proxy, error) {
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.Dial == nil {
		o.Dial = (&net.Dialer{Timeout: 10 * time.Second}).DialContext
	}
	if o.OnEvent == nil {
		o.OnEvent = func(Event) {}
	}
	if o.CAValidity <= 0 {
		o.CAValidity = 7 * 24 * time.Hour
	}
	ca, err := newAuthority(o.CAValidity)
	if err != nil {
		return nil, err
	}
	return &Proxy{opts: o, ca: ca}, nil
}

// CAPEM is the ephemeral CA's certificate, for the sandbox's trust store
// (SSL_CERT_FILE, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS). Only brokered
// hosts are ever served a leaf of it.
func (p *Proxy) CAPEM() []byte { return append([]byte(nil), p.ca.pem...) }

// Limits bound one call's (or one sandboxed server's) use of the proxy.
// A zero field means its default.
type Limits struct {
	MaxConns     int   // connections at once; default 32
	MaxBytesUp   int64 // sent by the sandbox, all connections; default 64 MiB
	MaxBytesDown int64 // received by it; default 1 GiB
	// IdleTimeout closes a connection with no byte either way for this
	// long; default 60 s. TotalTimeout ends every connection of the call
	// this long after Call; 0 means until Close.
	IdleTimeout  time.Duration
	TotalTimeout time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.MaxConns <= 0 {
		l.MaxConns = 32
	}
	if l.MaxBytesUp <= 0 {
		l.MaxBytesUp = 64 << 20
	}
	if l.MaxBytesDown <= 0 {
		l.MaxBytesDown = 1 << 30
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = time.Minute
	}
	return l
}

// errClosed is what Serve returns once the call is closed.
var errClosed = errors.New("egress: call closed")

// Serve accepts the sandbox's connections on l until l fails or the call
// is closed; it closes l. Serve may run on several listeners of a call.
func (c *Call) Serve(l net.Listener) error {
	if !c.track(l) {
		l.Close()
		return errClosed
	}
	defer c.untrack(l)
	defer l.Close()
	for {
		conn, err := l.Accept()
		if err != nil {
			if c.ctx.Err() != nil {
				return errClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.handle(conn)
		}()
	}
}

// track registers a listener or connection to close with the call; false
// when the call is already closed.
func (c *Call) track(x interface{ Close() error }) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.open[x] = struct{}{}
	return true
}

func (c *Call) untrack(x interface{ Close() error }) {
	c.mu.Lock()
	delete(c.open, x)
	c.mu.Unlock()
}

// Close ends the call: its listeners and connections are closed, and
// Close waits for their handlers (and so their events).
func (c *Call) Close() error {
	c.closeAll(RuleTotal, false)
	c.wg.Wait()
	c.transport.CloseIdleConnections()
	return nil
}

// closeAll closes what the call holds; cut marks the open flows as cut by
// rule (a timeout) rather than ended by the call's end.
func (c *Call) closeAll(rule string, cut bool) {
	c.mu.Lock()
	c.closed = true
	open := make([]interface{ Close() error }, 0, len(c.open))
	for x := range c.open {
		open = append(open, x)
	}
	c.mu.Unlock()
	c.cancel()
	for _, x := range open {
		if f, ok := x.(*flow); ok && cut {
			f.cut(rule)
			continue
		}
		x.Close()
	}
}
