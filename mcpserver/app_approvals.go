package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/toolwarden/toolwarden/approvals"
	"github.com/toolwarden/toolwarden/approvals/page"
	"github.com/toolwarden/toolwarden/approvals/socket"
	"github.com/toolwarden/toolwarden/approvals/webhook"
	"github.com/toolwarden/toolwarden/configs"
)

// startApprovalChannels starts the approval page and the control socket
// that approval.channel lists. stop closes them and waits, so that the
// socket file is gone when serve returns.
func startApprovalChannels(ctx context.Context, b *Built, cfg configs.Approval, log *slog.Logger) (stop func(), err error) {
	hub := b.OpenApprovals()
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
		pg := page.New(hub)
		ln, url, err := pg.Listen(cfg.Page.Addr)
		if err != nil {
			stop()
			return nil, fmt.Errorf("approval page: %w", err)
		}
		// The URL's secret opens the page once; it is never logged.
		fmt.Fprintf(os.Stderr, "toolwarden: approval page (the link works once; keep it private):\n%s\n", url)
		run("approval page", func(ctx context.Context) error { return pg.Serve(ctx, ln) })
	}
	if hub != nil && cfg.HasChannel("terminal") {
		dir, err := socket.Dir()
		var sock *socket.Server
		if err == nil {
			sock, err = socket.Listen(hub, dir)
		}
		if err != nil {
			stop()
			return nil, fmt.Errorf("terminal approver: %w", err)
		}
		log.Info("terminal approver listening: run toolwarden approvals watch", "socket", sock.Path())
		run("terminal approver", sock.Serve)
	}
	if hub != nil && cfg.HasChannel("webhook") {
		if err := startWebhook(ctx, hub, cfg.Webhook, log, run); err != nil {
			stop()
			return nil, fmt.Errorf("approval webhook: %w", err)
		}
	}
	return stop, nil
}

// minWebhookSecret is the shortest shared secret accepted (bytes).
const minWebhookSecret = 16

// startWebhook opens the callback listener and posts waiting calls.
func startWebhook(ctx context.Context, hub *approvals.Hub, cfg configs.ApprovalWebhook, log *slog.Logger, run func(string, func(context.Context) error)) error {
	secret, err := cfg.Secret(ctx, cfg.SecretRef())
	if err != nil {
		return err
	}
	if len(secret) < minWebhookSecret {
		return fmt.Errorf("%s must hold a secret of at least %d bytes", cfg.SecretRef(), minWebhookSecret)
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	callback := cfg.PublicURL
	if callback == "" {
		callback = "http://" + ln.Addr().String() + "/decide"
	}
	hook := webhook.New(hub, cfg.URL, []byte(secret), callback, log)
	mux := http.NewServeMux()
	mux.Handle("/decide", hook.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Info("approval webhook", "posts_to", cfg.URL, "callback", callback)
	hook.Start(ctx)
	run("approval webhook callback", func(ctx context.Context) error {
		go func() { <-ctx.Done(); _ = srv.Close() }()
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	return nil
}
