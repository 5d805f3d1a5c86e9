package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/mcpserver/httpserve"
)

// serveHTTP serves b over streamable HTTP and SSE on http.addr, with the
// bearer token, OAuth verifier and identities of the config; a token it
// generated is printed to stderr once.
func serveHTTP(ctx context.Context, b *Built, cfg configs.Config, log *slog.Logger, wrap func(http.Handler) http.Handler) error {
	token, generated, err := httpserve.ResolveToken(ctx, cfg.HTTP)
	if err != nil {
		return err
	}
	verifier, err := httpserve.OAuthVerifier(cfg.HTTP)
	if err != nil {
		return err
	}
	if generated && verifier != nil {
		token, generated = "", false // access tokens only: no static token was asked for
	}
	ids, err := httpserve.ResolveIdentities(ctx, cfg.HTTP)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.HTTP.Addr)
	if err != nil {
		return err
	}
	if generated {
		fmt.Fprintf(os.Stderr, "toolwarden: no %s, http.token_file or http.token_vault set; generated bearer token (shown once):\n%s\n", httpserve.TokenEnv, token)
	}
	if verifier != nil {
		log.Info("accepting OAuth access tokens", "issuer", verifier.Issuer(), "audience", verifier.Audience(),
			"required_scopes", verifier.Scopes(), "static_token", token != "")
	}
	log.Info("serving HTTP", "streamable", "http://"+ln.Addr().String()+httpserve.PathStreamable,
		"sse", "http://"+ln.Addr().String()+httpserve.PathSSE, "replica", cfg.Cluster.Replica(), "shared_state", cfg.Cluster.Shared())
	return b.ServeHTTP(ctx, ln, HTTPOptions{
		Token: token, AllowedHosts: cfg.HTTP.AllowedHosts, AllowedOrigins: cfg.HTTP.AllowedOrigins,
		MaxBodyBytes: cfg.HTTP.MaxBodyBytes, MaxSessions: cfg.HTTP.MaxSessions, IdleTimeout: cfg.HTTP.SessionIdleTimeout,
		MaxStreams: cfg.HTTP.MaxStreamsPerIdentity,
		Identities: ids, OAuth: verifier, PublicURL: cfg.HTTP.PublicURL,
		OAuthScopes: supportedScopes(cfg), Wrap: wrap,
	})
}

// supportedScopes are the scopes the OAuth metadata lists: the required
// ones and those identities rules match.
func supportedScopes(cfg configs.Config) []string {
	s := append(slices.Clone(cfg.HTTP.OAuth.Scopes), cfg.IdentityScopes()...)
	slices.Sort(s)
	return slices.Compact(s)
}
