package upstream

import (
	"context"
	"fmt"

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
		var t transport.Interface
		if u.Transport == configs.TransportSSE {
			t, err = transport.NewSSE(u.URL, transport.WithHeaders(hdr))
		} else {
			t, err = transport.NewStreamableHTTP(u.URL, transport.WithHTTPHeaders(hdr))
		}
		if err != nil {
			return nil, err
		}
		return &session{t: t}, nil
	}, nil
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
