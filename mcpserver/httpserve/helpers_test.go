package httpserve_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/internal/oauth"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/mcpserver/httpserve"
)

// The bearer tokens of the transports under test: the default identity's
// and the "ci" identity's.
const (
	testToken = "test-token-0123456789abcdef"
	ciToken   = "ci-token-fedcba9876543210"
)

// initBody is an initialize request of the 2025-11-25 era.
const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// identityKey holds the identity bareServer's Authenticated hook puts in a
// request's context.
type identityKey struct{}

// bareServer is mcp-go's server without tools behind the transport, with
// hooks that keep the identity in the context and audit nothing: what
// the transport does on its own, without mcpserver's guard.
func bareServer() httpserve.Server {
	return httpserve.Server{
		MCP: server.NewMCPServer("bare", "1"),
		Log: slog.New(slog.DiscardHandler),
		Authenticated: func(ctx context.Context, identity string, _ *oauth.Principal) context.Context {
			return context.WithValue(ctx, identityKey{}, identity)
		},
		Owner: func(ctx context.Context) string {
			id, _ := ctx.Value(identityKey{}).(string)
			return id
		},
		Refused: func(string, string, *toolerr.Error) {},
	}
}

// serve runs the transport over bareServer on a test listener until the
// test ends.
func serve(t *testing.T, opts httpserve.Options) *httptest.Server {
	t.Helper()
	return serveServer(t, bareServer(), opts)
}

// serveServer is serve over s.
func serveServer(t *testing.T, s httpserve.Server, opts httpserve.Options) *httptest.Server {
	t.Helper()
	h, stop := httpserve.Handler(s, opts)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stop(ctx)
		srv.Close()
	})
	return srv
}
