package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/audit/ship"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/outersandbox"
	"github.com/toolwarden/toolwarden/internal/version"
)

// openAudit opens the audit log with its shipping and anchoring, as
// configured; the close function closes the log, then sends what is left
// to ship and writes the last anchor.
func openAudit(ctx context.Context, cfg configs.Config, log *slog.Logger) (*audit.Log, func(), error) {
	c := cfg.Audit
	opts := audit.Options{Sync: audit.SyncMode(c.Sync), MaxBytes: c.MaxBytes, MaxAge: c.MaxAge, Keep: c.Keep, Log: log,
		Replica: c.Replica()}
	if c.SigningKeyFile != "" {
		signer, err := audit.LoadSigningKey(c.SigningKeyFile)
		if err != nil {
			return nil, nil, fmt.Errorf("audit.signing_key_file: %w", err)
		}
		opts.Signer, opts.CheckpointLines, opts.CheckpointInterval = signer, c.CheckpointEvery.Lines, c.CheckpointEvery.Interval
		log.Info("audit checkpoints signed", "key_id", signer.KeyID(), "every_lines", c.CheckpointEvery.Lines,
			"every", c.CheckpointEvery.Interval)
	}
	sinks, stopSink, err := openSinks(cfg, log)
	if err != nil {
		return nil, nil, err
	}
	switch len(sinks) {
	case 1:
		opts.Ship = sinks[0]
	case 2:
		opts.Ship = ship.Tee(sinks)
	}
	auditLog, err := audit.OpenWith(AuditPath(cfg), opts)
	if err != nil {
		stopSink()
		if outer, ok := outersandbox.Detect(os.Getenv); ok && outersandbox.WriteRefused(err) {
			err = fmt.Errorf("%w; toolwarden runs inside %s: %s", err, outer.Name,
				outer.Write(filepath.Dir(AuditPath(cfg)), "audit.path (TOOLWARDEN_AUDIT_PATH)"))
		}
		return nil, nil, err
	}
	anchors, err := startAnchors(ctx, cfg, auditLog, log)
	if err != nil {
		auditLog.Close()
		stopSink()
		return nil, nil, err
	}
	return auditLog, func() {
		auditLog.Close()
		stopSink()
		if anchors != nil {
			if err := anchors.Close(); err != nil {
				log.Warn("audit anchor: writing the last chain head failed", "err", err)
			}
		}
	}, nil
}

// openSinks starts the shipping audit.ship asks for: syslog, OTLP or
// both; stop sends what is left and stops them.
func openSinks(cfg configs.Config, log *slog.Logger) (sinks []audit.Shipper, stop func(), err error) {
	c := cfg.Audit.Ship
	var closers []func() error
	stop = func() {
		for _, c := range closers {
			_ = c()
		}
	}
	if c.Syslog != "" {
		s, err := ship.NewSyslog(c.Syslog, c.Queue, log)
		if err != nil {
			return nil, nil, fmt.Errorf("audit.ship.syslog: %w", err)
		}
		sinks, closers = append(sinks, s), append(closers, s.Close)
	}
	if c.OTLP != "" {
		spool := c.Spool
		if spool == "" {
			path := AuditPath(cfg)
			spool = filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".otlp-spool")
		}
		s, err := ship.NewOTLP(ship.OTLPOptions{Endpoint: c.OTLP, Spool: spool, SpoolMaxBytes: c.SpoolMaxBytes,
			Replica: cfg.Audit.Replica(), Version: version.Get().Version, Log: log})
		if err != nil {
			stop()
			return nil, nil, fmt.Errorf("audit.ship.otlp: %w", err)
		}
		sinks, closers = append(sinks, s), append(closers, s.Close)
	}
	return sinks, stop, nil
}

// startAnchors starts anchoring when audit.anchor.bucket is set.
func startAnchors(ctx context.Context, cfg configs.Config, auditLog *audit.Log, log *slog.Logger) (*ship.Anchorer, error) {
	an := cfg.Audit.Anchor
	if an.Bucket == "" {
		return nil, nil
	}
	client, err := ship.NewS3Client(cfg.Artifacts)
	if err != nil {
		return nil, err
	}
	if err := ship.CheckBucket(ctx, client, an.Bucket); err != nil {
		return nil, err
	}
	return ship.NewAnchorer(client, an.Bucket, an.Prefix, cfg.Audit.Replica(), an.Every, auditLog.Head, log), nil
}

// recordSurface writes the start line with the digest of the tool surface
// and the build (version, commit, date) to the audit log, and logs it. A server whose start cannot be audited
// does not serve.
func recordSurface(ctx context.Context, b *Built, auditLog guard.Auditor, log *slog.Logger) error {
	digest, err := b.SurfaceDigest(ctx)
	if err != nil {
		return fmt.Errorf("tool surface: %w", err)
	}
	if err := auditLog.Append(guard.StartEntry(digest, buildInfo.String())); err != nil {
		return fmt.Errorf("audit log: start line: %w", err)
	}
	log.Info("tool surface", "tools_sha256", digest)
	return nil
}
