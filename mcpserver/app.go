package mcpserver

import (
	"context"
	"log/slog"
	"os"

	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/configs"
	buildversion "github.com/toolwarden/toolwarden/internal/version"
	"github.com/toolwarden/toolwarden/mcpserver/stdio"
)

// This file and the other app*.go files are the process's composition
// root: they open the audit log with its shipping and anchoring, start the
// observers, build the server (Build) and its approval channels, and serve
// stdio or HTTP. cmd/toolwarden only parses flags and calls one of the
// entry points here (Serve, CallOnce, PrintTools, ExplainPolicy,
// DiffPolicy, CheckConfig, OpenInProcess).

// buildInfo is this binary's version, commit and date: stamped by the
// release build, else what the Go toolchain recorded (internal/version).
var buildInfo = buildversion.Get()

// Serve runs the server of l until ctx ends: over stdio (os.Stdin and
// os.Stdout), or over HTTP when http.addr is set. It opens the audit log
// (with its shippers and anchors) and the observers first and closes them
// last.
func Serve(ctx context.Context, l *configs.Loaded) error {
	cfg := l.Config
	log := NewLogger(cfg.Log.Level)
	obs, err := startObservers(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer obs.stop()
	b, auditLog, closeAll, err := openObservedServer(ctx, cfg, log, obs.Observers)
	if err != nil {
		return err
	}
	defer closeAll()
	obs.knowTools(b.Tools)
	// Set once the server is built, so that its start-up garbage goes at
	// the default target.
	logStart(log, l, auditLog.Path(), tuneGC())
	startIdleRelease(ctx)
	if err := recordSurface(ctx, b, auditLog, log); err != nil {
		return err
	}
	// A killed earlier server may have left temporary files of its writes;
	// a large workspace takes a while to walk, so serving starts at once.
	go removeLeftovers(ctx, b, log)
	stopApprovals, err := startApprovalChannels(ctx, b, cfg.Approval, log)
	if err != nil {
		return err
	}
	defer stopApprovals()
	if cfg.HTTP.Addr == "" {
		in, restore := stdio.PollableInput(os.Stdin)
		defer restore()
		return b.ServeStdio(ctx, in, os.Stdout, os.Stderr)
	}
	return serveHTTP(ctx, b, cfg, log, obs.wrapHTTP())
}

// openServer opens the audit log and builds the server over it, as Serve,
// CallOnce and OpenInProcess do; closeAll closes the server, then the log.
func openServer(ctx context.Context, cfg configs.Config, log *slog.Logger) (*Built, *audit.Log, func(), error) {
	return openObservedServer(ctx, cfg, log, Observers{})
}

// openObservedServer is openServer with observers (metrics).
func openObservedServer(ctx context.Context, cfg configs.Config, log *slog.Logger, obs Observers) (*Built, *audit.Log, func(), error) {
	auditLog, closeAudit, err := openAudit(ctx, cfg, log)
	if err != nil {
		return nil, nil, nil, err
	}
	b, err := BuildObserved(ctx, cfg, auditLog, buildInfo.Version, log, obs)
	if err != nil {
		closeAudit()
		return nil, nil, nil, err
	}
	return b, auditLog, func() { b.Close(); closeAudit() }, nil
}

// NewLogger returns the stderr logger at the given level (log.level).
func NewLogger(level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}

// logStart logs the effective setup, and every widening of the defaults.
func logStart(log *slog.Logger, l *configs.Loaded, auditPath, gcPercent string) {
	src := l.File
	if src == "" {
		src = "embedded defaults"
	}
	log.Info("toolwarden starting", "version", buildInfo.String(), "config", src, "workspace", l.Config.Workspace, "audit", auditPath, "gc_percent", gcPercent)
	for _, w := range l.Widenings {
		log.Warn("policy widened", "change", w)
	}
	for _, w := range l.Warnings {
		log.Warn("check the environment", "warning", w)
	}
}

// removeLeftovers deletes the temporary files that killed servers left in
// the workspace, and says so.
func removeLeftovers(ctx context.Context, b *Built, log *slog.Logger) {
	removed, err := b.Workspace.RemoveLeftovers(ctx)
	if len(removed) > 0 {
		log.Warn("removed temporary files of interrupted writes (a server was killed)", "count", len(removed), "first", removed[0])
	}
	if err != nil && ctx.Err() == nil {
		log.Warn("looking for interrupted writes failed", "err", err)
	}
}

// oneShot marks cfg as a command's that makes one call or none (call,
// config check, tools, policy explain): no sandbox is booted ahead for
// runs that never come (exec.warm_pool).
func oneShot(cfg configs.Config) configs.Config {
	cfg.Exec.OneShot = true
	return cfg
}
