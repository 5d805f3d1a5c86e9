package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/mcpserver"
)

// recordSurface writes the start line with the digest of the tool surface
// and the build (version, commit, date) to the audit log, and logs it. A server whose start cannot be audited
// does not serve.
func recordSurface(ctx context.Context, b *mcpserver.Built, audit guard.Auditor, log *slog.Logger) error {
	digest, err := b.SurfaceDigest(ctx)
	if err != nil {
		return fmt.Errorf("tool surface: %w", err)
	}
	if err := audit.Append(guard.StartEntry(digest, build.String())); err != nil {
		return fmt.Errorf("audit log: start line: %w", err)
	}
	log.Info("tool surface", "tools_sha256", digest)
	return nil
}
