package upstream

import (
	"context"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/toolwarden/toolwarden/configs"
)

// httpDialer connects to u's URL over streamable HTTP, or over SSE (the
// 2024-11-05 transport) with transport: sse, sending the headers its
// headers_env names.
func httpDialer(u configs.Upstream, opts Options) (dialer, error) {
	headers := map[string]string{}
	for h, v := range u.HeadersEnv {
		if headers[h] = opts.Getenv(v); headers[h] == "" {
			opts.Log.Warn("upstream header variable is unset; the header is sent empty", "upstream", u.Name, "header", h, "variable", v)
		}
	}
	return func(context.Context) (*session, error) {
		var t transport.Interface
		var err error
		if u.Transport == configs.TransportSSE {
			t, err = transport.NewSSE(u.URL, transport.WithHeaders(headers))
		} else {
			t, err = transport.NewStreamableHTTP(u.URL, transport.WithHTTPHeaders(headers))
		}
		if err != nil {
			return nil, err
		}
		return &session{t: t}, nil
	}, nil
}
