package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"

	"github.com/spf13/cobra"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/mcpserver"
)

func newServeCmd() *cobra.Command {
	f := &configFlags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve MCP over stdio, or over streamable HTTP (/mcp) and SSE (/sse) with --http",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := f.load(cmd)
			if err != nil {
				return err
			}
			if page, _ := cmd.Flags().GetBool("approval-page"); page && !l.Config.Approval.HasChannel("page") {
				l.Config.Approval.Channel = append(l.Config.Approval.Channel, "page")
			}
			return serve(cmd, l)
		},
	}
	f.register(cmd)
	cmd.Flags().String("http", "", "listen address for HTTP, e.g. 127.0.0.1:8080 (default: stdio)")
	cmd.Flags().Bool("approval-page", false, "add the local approval page to approval.channel (after the configured channels); its URL is printed to stderr once")
	return cmd
}

func serve(cmd *cobra.Command, l *configs.Loaded) error {
	cfg := l.Config
	log := newLogger(cfg.Log.Level)
	obs, err := startObservers(cmd.Context(), cfg, log)
	if err != nil {
		return err
	}
	defer obs.stop()
	b, audit, closeAll, err := openObservedServer(cmd.Context(), cfg, log, obs.Observers)
	if err != nil {
		return err
	}
	defer closeAll()
	obs.knowTools(b.Tools)
	// Set once the rules are built, so that their start-up garbage goes at
	// the default target.
	logStart(log, l, audit.Path(), tuneGC())
	if err := recordSurface(cmd.Context(), b, audit, log); err != nil {
		return err
	}
	// A killed earlier server may have left temporary files of its writes;
	// a large workspace takes a while to walk, so serving starts at once.
	go removeLeftovers(cmd.Context(), b, log)
	stopApprovals, err := startApprovalChannels(cmd.Context(), b, cfg.Approval, log)
	if err != nil {
		return err
	}
	defer stopApprovals()
	if cfg.HTTP.Addr == "" {
		in, restore := mcpserver.PollableInput(os.Stdin)
		defer restore()
		return b.ServeStdio(cmd.Context(), in, os.Stdout, os.Stderr)
	}
	return serveHTTP(cmd, b, cfg, log, obs.wrapHTTP())
}

// openServer opens the audit log and builds the server over it, as serve,
// call and gemini do; closeAll closes the server, then the log.
func openServer(ctx context.Context, cfg configs.Config, log *slog.Logger) (*mcpserver.Built, *audit.Log, func(), error) {
	return openObservedServer(ctx, cfg, log, mcpserver.Observers{})
}

// openObservedServer is openServer with observers (metrics).
func openObservedServer(ctx context.Context, cfg configs.Config, log *slog.Logger, obs mcpserver.Observers) (*mcpserver.Built, *audit.Log, func(), error) {
	audit, closeAudit, err := openAudit(ctx, cfg, log)
	if err != nil {
		return nil, nil, nil, err
	}
	b, err := mcpserver.BuildObserved(ctx, cfg, audit, version, log, obs)
	if err != nil {
		closeAudit()
		return nil, nil, nil, err
	}
	return b, audit, func() { b.Close(); closeAudit() }, nil
}

func serveHTTP(cmd *cobra.Command, b *mcpserver.Built, cfg configs.Config, log *slog.Logger, wrap func(http.Handler) http.Handler) error {
	token, generated, err := mcpserver.ResolveToken(cfg.HTTP.TokenFile)
	if err != nil {
		return err
	}
	verifier, err := mcpserver.OAuthVerifier(cfg.HTTP)
	if err != nil {
		return err
	}
	if generated && verifier != nil {
		token, generated = "", false // access tokens only: no static token was asked for
	}
	ids, err := mcpserver.ResolveIdentities(cfg.HTTP.Identities)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.HTTP.Addr)
	if err != nil {
		return err
	}
	if generated {
		fmt.Fprintf(os.Stderr, "toolwarden: no %s or http.token_file set; generated bearer token (shown once):\n%s\n", mcpserver.TokenEnv, token)
	}
	if verifier != nil {
		log.Info("accepting OAuth access tokens", "issuer", verifier.Issuer(), "audience", verifier.Audience(),
			"required_scopes", verifier.Scopes(), "static_token", token != "")
	}
	log.Info("serving HTTP", "streamable", "http://"+ln.Addr().String()+mcpserver.PathStreamable,
		"sse", "http://"+ln.Addr().String()+mcpserver.PathSSE, "replica", cfg.Cluster.Replica(), "shared_state", cfg.Cluster.Shared())
	return b.ServeHTTP(cmd.Context(), ln, mcpserver.HTTPOptions{
		Token: token, AllowedHosts: cfg.HTTP.AllowedHosts, AllowedOrigins: cfg.HTTP.AllowedOrigins,
		MaxBodyBytes: cfg.HTTP.MaxBodyBytes, MaxSessions: cfg.HTTP.MaxSessions, IdleTimeout: cfg.HTTP.SessionIdleTimeout,
		MaxStreams: cfg.HTTP.MaxStreamsPerIdentity,
		Identities: ids, OAuth: verifier, PublicURL: cfg.HTTP.PublicURL,
		OAuthScopes: supportedScopes(cfg), Wrap: wrap,
	})
}

// logStart logs the effective setup, and every widening of the defaults.
func logStart(log *slog.Logger, l *configs.Loaded, auditPath, gcPercent string) {
	src := l.File
	if src == "" {
		src = "embedded defaults"
	}
	log.Info("toolwarden starting", "version", build.String(), "config", src, "workspace", l.Config.Workspace, "audit", auditPath, "gc_percent", gcPercent)
	for _, w := range l.Widenings {
		log.Warn("policy widened", "change", w)
	}
}

// removeLeftovers deletes the temporary files that killed servers left in
// the workspace, and says so.
func removeLeftovers(ctx context.Context, b *mcpserver.Built, log *slog.Logger) {
	removed, err := b.Workspace.RemoveLeftovers(ctx)
	if len(removed) > 0 {
		log.Warn("removed temporary files of interrupted writes (a server was killed)", "count", len(removed), "first", removed[0])
	}
	if err != nil && ctx.Err() == nil {
		log.Warn("looking for interrupted writes failed", "err", err)
	}
}

// supportedScopes are the scopes the OAuth metadata lists: the required
// ones and those identities rules match.
func supportedScopes(cfg configs.Config) []string {
	s := append(slices.Clone(cfg.HTTP.OAuth.Scopes), cfg.IdentityScopes()...)
	slices.Sort(s)
	return slices.Compact(s)
}
