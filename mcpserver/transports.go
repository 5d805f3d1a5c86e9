package mcpserver

import (
	"context"
	"io"
	"net"
	"net/http"

	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/oauth"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/mcpserver/httpserve"
	"github.com/toolwarden/toolwarden/mcpserver/stdio"
)

// The server's side of its transports (packages stdio and httpserve):
// each is handed the mcp-go server (the HTTP one with a few hooks,
// httpServer); ServeStdio, ServeHTTP and HTTPHandler serve this server
// on them.

// ServeStdio serves MCP on in/out until in closes or ctx is done (see
// stdio.Serve). Logs go to errOut; out carries only protocol messages.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out, errOut io.Writer) error {
	return stdio.ServeTasks(ctx, s.mcp, s.tasks, in, out, errOut)
}

// HTTPOptions configures the HTTP transports (see httpserve.Options).
type HTTPOptions = httpserve.Options

// Identity is one HTTP client: its bearer token and the name its limits
// are counted under (see httpserve.Identity).
type Identity = httpserve.Identity

// ServeHTTP serves the HTTP transports on ln until ctx is done, then
// shuts down gracefully (see httpserve.Serve).
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, opts HTTPOptions) error {
	return httpserve.Serve(ctx, s.httpServer(), ln, opts)
}

// HTTPHandler serves the HTTP transports (see httpserve.Handler); the
// returned stop function closes open sessions.
func (s *Server) HTTPHandler(opts HTTPOptions) (http.Handler, func(context.Context)) {
	return httpserve.Handler(s.httpServer(), opts)
}

// httpServer is the server as the HTTP transport sees it: the requests go
// to mcp-go's server, the identity a request authenticated as is put in
// its context for the guard (identityOf, claimsOf), and a session used
// with another identity's credentials is refused in the audit log.
func (s *Server) httpServer() httpserve.Server {
	return httpserve.Server{
		MCP: s.mcp,
		Log: s.log,
		Authenticated: func(ctx context.Context, identity string, p *oauth.Principal) context.Context {
			ctx = withIdentity(ctx, identity)
			if p != nil {
				ctx = withPrincipal(ctx, p)
			}
			return ctx
		},
		Owner: identityOf,
		Refused: func(identity, session string, e *toolerr.Error) {
			_ = s.guard.Refuse(guard.Call{Tool: "-", Session: session, Identity: identity}, e)
		},
		Tasks: s.tasks,
	}
}
