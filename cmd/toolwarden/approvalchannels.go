package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/toolwarden/toolwarden/approvalpage"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/mcpserver"
)

// startApprovalChannels starts the approval page and the control socket
// that approval.channel lists; they stop when ctx ends.
func startApprovalChannels(ctx context.Context, b *mcpserver.Built, cfg configs.Approval, log *slog.Logger) error {
	hub := b.Approvals()
	if hub == nil {
		return nil
	}
	if cfg.HasChannel("page") {
		page := approvalpage.New(hub)
		ln, url, err := page.Listen(cfg.Page.Addr)
		if err != nil {
			return fmt.Errorf("approval page: %w", err)
		}
		// The URL's secret opens the page once; it is never logged.
		fmt.Fprintf(os.Stderr, "toolwarden: approval page (the link works once; keep it private):\n%s\n", url)
		go func() {
			if err := page.Serve(ctx, ln); err != nil {
				log.Error("approval page stopped", "err", err)
			}
		}()
	}
	return nil
}
