package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/toolwarden/toolwarden/approvalpage"
	"github.com/toolwarden/toolwarden/approvalsock"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/mcpserver"
)

// startApprovalChannels starts the approval page and the control socket
// that approval.channel lists. stop closes them and waits, so that the
// socket file is gone when serve returns.
func startApprovalChannels(ctx context.Context, b *mcpserver.Built, cfg configs.Approval, log *slog.Logger) (stop func(), err error) {
	hub := b.Approvals()
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	stop = func() { cancel(); wg.Wait() }
	run := func(what string, serve func(context.Context) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := serve(ctx); err != nil {
				log.Error(what+" stopped", "err", err)
			}
		}()
	}
	if hub != nil && cfg.HasChannel("page") {
		page := approvalpage.New(hub)
		ln, url, err := page.Listen(cfg.Page.Addr)
		if err != nil {
			stop()
			return nil, fmt.Errorf("approval page: %w", err)
		}
		// The URL's secret opens the page once; it is never logged.
		fmt.Fprintf(os.Stderr, "toolwarden: approval page (the link works once; keep it private):\n%s\n", url)
		run("approval page", func(ctx context.Context) error { return page.Serve(ctx, ln) })
	}
	if hub != nil && cfg.HasChannel("terminal") {
		dir, err := approvalsock.Dir()
		var sock *approvalsock.Server
		if err == nil {
			sock, err = approvalsock.Listen(hub, dir)
		}
		if err != nil {
			stop()
			return nil, fmt.Errorf("terminal approver: %w", err)
		}
		log.Info("terminal approver listening: run toolwarden approvals watch", "socket", sock.Path())
		run("terminal approver", sock.Serve)
	}
	return stop, nil
}
