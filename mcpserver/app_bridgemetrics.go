package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/toolwarden/toolwarden/internal/metrics"
)

// BridgeRequest is one answered model request of `toolwarden gemini`, as
// its metrics count it.
type BridgeRequest = metrics.BridgeRequest

// BridgeMetrics serves the counters of `toolwarden gemini --metrics`:
// the bridge's model requests, tokens and spend, whichever server it
// drives.
type BridgeMetrics struct {
	m    *metrics.Bridge
	stop context.CancelFunc
	done chan struct{}
}

// ServeBridgeMetrics listens on addr (checked by the caller:
// configs.Metrics.CheckFlag) and serves the bridge's metrics until Close.
func ServeBridgeMetrics(ctx context.Context, addr string, log *slog.Logger) (*BridgeMetrics, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	b := &BridgeMetrics{m: metrics.NewBridge(), stop: cancel, done: make(chan struct{})}
	go func() { defer close(b.done); b.m.Serve(ctx, ln, log) }()
	log.Info("serving metrics", "url", "http://"+ln.Addr().String()+metrics.Path)
	return b, nil
}

// Record counts one model request.
func (b *BridgeMetrics) Record(r BridgeRequest) { b.m.Request(r) }

// Close stops the listener.
func (b *BridgeMetrics) Close() {
	b.stop()
	<-b.done
}
