package upstream

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/toolwarden/toolwarden/configs"
)

// httpDialer connects to u's URL over streamable HTTP, or over SSE (the
// 2024-11-05 transport) with transport: sse, sending the headers its
// headers_env, headers_file and headers_vault name, read at each
// connection (a rotated file is picked up).
func httpDialer(u configs.Upstream, opts Options) (dialer, error) {
	return func(ctx context.Context) (*session, error) {
		hdr, err := headers(ctx, u, opts)
		if err != nil {
			return nil, err
		}
		sse := u.Transport == configs.TransportSSE
		s := &session{cap: &urlCap{sse: sse, cut: make(chan struct{})}}
		hc := &http.Client{Transport: capTransport{base: http.DefaultTransport, max: maxMessageBytes(u), over: s.cap.over}}
		if sse {
			s.t, err = transport.NewSSE(u.URL, transport.WithHeaders(hdr), transport.WithHTTPClient(hc))
		} else {
			s.t, err = transport.NewStreamableHTTP(u.URL, transport.WithHTTPHeaders(hdr), transport.WithHTTPBasicClient(hc))
		}
		if err != nil {
			return nil, err
		}
		return s, nil
	}, nil
}

// urlCap is what became of the messages of a url upstream's session that
// were over the cap (capTransport).
type urlCap struct {
	// sse: the upstream answers on one event stream (transport: sse),
	// which a cut message ends: the session is over and connected again.
	sse bool
	// refused is told of a message cut on streamable HTTP, whose session
	// goes on (Conn.open sets it).
	refused func(*MessageTooLargeError)

	mu   sync.Mutex
	err  *MessageTooLargeError // the message that ended an SSE session
	cut  chan struct{}         // closed when it did
	once sync.Once
}

// over notes e on the request's call and ends an SSE session.
func (c *urlCap) over(req *http.Request, e *MessageTooLargeError) {
	noteOf(req.Context()).set(e)
	if !c.sse {
		if c.refused != nil {
			c.refused(e)
		}
		return
	}
	c.once.Do(func() {
		c.mu.Lock()
		c.err = e
		c.mu.Unlock()
		close(c.cut)
	})
}

// ended is the message that ended the session, nil while it serves.
func (c *urlCap) ended() *MessageTooLargeError {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// headers reads the values of u's headers.
func headers(ctx context.Context, u configs.Upstream, opts Options) (map[string]string, error) {
	out := map[string]string{}
	for _, h := range u.HeaderRefs(fmt.Sprintf("upstreams %q", u.Name)) {
		v, err := opts.value(ctx, h.Ref)
		if err != nil {
			return nil, err
		}
		if v == "" {
			opts.log().Warn("upstream header variable is unset; the header is sent empty", "upstream", u.Name, "header", h.Name, "variable", h.Ref.Env)
		}
		out[h.Name] = v
	}
	return out, nil
}
