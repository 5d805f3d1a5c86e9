// Package httpserve is toolwarden's HTTP transport: streamable HTTP at
// /mcp and legacy SSE at /sse (its messages at /message), behind the
// Host, Origin, bearer-token or OAuth, and body-size checks, with the
// strict JSON-RPC pre-check, sessions bound to the identity that opened
// them, a cap on each identity's event streams, and tools/call answers
// written in one pass (answer.go), the notifications a request sends on
// its own stream (related.go). It also resolves the bearer tokens and
// the OAuth verifier the options carry.
//
// It decides nothing about a call: mcp-go's MCPServer, built by mcpserver
// with the guard as its tool middleware, answers every request, and the
// server is handed who sent it through Server's hooks. It does not import
// mcpserver; mcpserver imports it (StandIn, SessionDigest).
package httpserve

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/hostcheck"
	"github.com/toolwarden/toolwarden/internal/oauth"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/internal/tracing"
)

// Options configures the HTTP transports.
type Options struct {
	Token          string
	AllowedHosts   []string
	AllowedOrigins []string
	MaxBodyBytes   int64
	MaxSessions    int
	IdleTimeout    time.Duration
	// MaxStreams bounds the event streams (GET /mcp, GET /sse) one
	// identity holds open at once; 0 is no bound.
	MaxStreams int
	// Identities are more bearer tokens, each with the name its limits
	// are counted under; Token's identity is TokenIdentity(Token).
	Identities []Identity
	// OAuth, when set, also accepts its issuer's access tokens, and the
	// protected-resource metadata is served.
	OAuth *oauth.Verifier
	// PublicURL is the server's URL as clients reach it; empty means
	// the request's own scheme and Host.
	PublicURL string
	// OAuthScopes are the scopes the metadata lists as supported: the
	// required ones and those identities rules match; empty means the
	// required ones.
	OAuthScopes []string
	// Wrap, when set, wraps the whole handler (the HTTP metrics).
	Wrap func(http.Handler) http.Handler
}

// Paths served on the HTTP listener.
const (
	PathStreamable = "/mcp"
	PathSSE        = "/sse"
	PathMessage    = "/message"
)

// Server is the MCP server behind the transport, as the transport needs
// it: mcp-go's server to answer the requests, and the hooks through which
// it learns who sent them.
type Server struct {
	// MCP answers every request.
	MCP *server.MCPServer
	// Log gets the transport's warnings and mcp-go's streamable server's
	// log.
	Log *slog.Logger
	// Authenticated returns the context of a request authenticated as
	// identity; p is its access token's principal, nil for a static token.
	Authenticated func(ctx context.Context, identity string, p *oauth.Principal) context.Context
	// Owner is the identity a request's context carries (Authenticated's),
	// what its sessions are bound to and its event streams counted under:
	// a bearer token's identity name, unique among the configured tokens,
	// or an OAuth principal's subject and issuer together
	// (oauth.Principal.Name), as a subject is unique only within its
	// issuer.
	Owner func(ctx context.Context) string
	// Refused audits a request refused under e's rule: a session, named
	// by SessionDigest, used with another identity's credentials.
	Refused func(identity, session string, e *toolerr.Error)
	// Tasks, when set, answers the task requests (tasks.go).
	Tasks Tasks
}

// Handler serves streamable HTTP at /mcp and legacy SSE at /sse (with
// its message endpoint at /message), behind Host, Origin, bearer-token and
// body-size checks. A session serves only the identity that opened it
// (bindStreamable, bindSSE). The returned stop function closes open
// sessions.
func Handler(s Server, opts Options) (http.Handler, func(context.Context)) {
	sessions, sseSessions := newSessionIDs(opts.MaxSessions, s.Owner), newSessionIDs(0, s.Owner)
	// No event store (server.WithEventStore): spliceAnswers needs each
	// answer written to its own POST's response, not stored for replay.
	streamable := server.NewStreamableHTTPServer(s.MCP,
		server.WithSessionIdManagerResolver(sessions),
		server.WithSessionIdleTTL(opts.IdleTimeout),
		server.WithStreamableHTTPLogger(s.Log),
		server.WithHTTPContextFunc(relateSession(s.MCP)),
	)
	sse := server.NewSSEServer(s.MCP,
		server.WithSSEEndpoint(PathSSE),
		server.WithMessageEndpoint(PathMessage),
		server.WithKeepAlive(true),
		server.WithSessionIDGenerator(sseSessions.generateSSE),
	)
	streams := newStreamCap(opts.MaxStreams, s.Owner)
	mux := http.NewServeMux()
	mux.Handle(PathStreamable, requireJSON(strictJSONRPC(limitSessions(sessions, s.bindStreamable(sessions, streams.wrap(answerTasks(s.Tasks, relateNotifications(spliceAnswers(streamable)))))))))
	mux.Handle(PathSSE, streams.wrap(sseSessions.trackSSE(sse.SSEHandler())))
	mux.Handle(PathMessage, requireJSON(strictJSONRPC(s.bindSSE(sseSessions, sse.MessageHandler()))))
	auth := newAuthenticator(opts, s.Authenticated)
	h := checkHost(opts.AllowedHosts, withMetadata(opts, checkOrigin(opts.AllowedOrigins, auth.require(capBody(opts.MaxBodyBytes, tracing.HTTP(mux))))))
	if opts.Wrap != nil {
		h = opts.Wrap(h)
	}
	stop := func(ctx context.Context) {
		_ = sse.Shutdown(ctx)
		_ = streamable.Shutdown(ctx)
	}
	return h, stop
}

// idleConnTimeout closes a keep-alive connection idle between requests for
// this long, so that clients and balancers that keep connections open (a
// load balancer's idle pool) do not hold a goroutine and a descriptor each
// for ever. A stream in progress is a request, not idle.
var idleConnTimeout = 2 * time.Minute

// Serve serves s on ln (see Handler) until ctx is done, then shuts down
// gracefully.
func Serve(ctx context.Context, s Server, ln net.Listener, opts Options) error {
	h, stop := Handler(s, opts)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10, IdleTimeout: idleConnTimeout}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stop(shutdownCtx)
	err := srv.Shutdown(shutdownCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close()
	}
	return err
}

// checkHost refuses requests whose Host is neither loopback nor allowed, so
// a DNS-rebound page cannot reach a local server.
func checkHost(allowed []string, next http.Handler) http.Handler {
	return hostcheck.Handler(func(hostport string) bool {
		return hostcheck.Loopback(hostport) || slices.Contains(allowed, hostport) || slices.Contains(allowed, hostcheck.Hostname(hostport))
	}, "http.allowed_hosts", next)
}

// checkOrigin refuses browser requests from origins not explicitly
// allowed, except the listener's own origin on a loopback name (see
// ownLoopbackOrigin). Requests without an Origin header (non-browser
// clients) pass.
func checkOrigin(allowed []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !slices.Contains(allowed, o) && !ownLoopbackOrigin(r, o) {
			http.Error(w, "forbidden: Origin "+quote(o)+" is not allowed (http.allowed_origins)", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ownLoopbackOrigin reports whether origin is this listener's own on a
// loopback name: http://localhost:PORT, 127.0.0.1 or [::1], PORT being
// the port the request came in on. Such a page was served by this very
// listener, so it is same-origin; a DNS-rebound page carries its own
// name (http://evil.example:PORT) and is still refused.
func ownLoopbackOrigin(r *http.Request, origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Path != "" || !configs.IsLoopback(u.Hostname()) {
		return false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	_, lport, err := net.SplitHostPort(local.String())
	return err == nil && lport == port
}

// identities are every accepted token with its identity.
func (o Options) identities() []Identity {
	out := []Identity{{Name: TokenIdentity(o.Token), Token: o.Token}}
	return append(out, o.Identities...)
}

// capBody bounds request bodies.
func capBody(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			http.Error(w, "request body too large (http.max_body_bytes)", http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, max)
		next.ServeHTTP(w, r)
	})
}

// limitSessions refuses new streamable sessions past the cap.
func limitSessions(ids *sessionIDs, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get(server.HeaderKeySessionID) == "" && ids.full() {
			http.Error(w, "too many sessions (http.max_sessions)", http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func quote(s string) string {
	if len(s) > 200 {
		s = s[:200]
	}
	return `"` + strings.ReplaceAll(s, `"`, `'`) + `"`
}
