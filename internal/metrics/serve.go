package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where the metrics are served.
const Path = "/metrics"

// Handler serves the registry in the Prometheus exposition formats, at
// Path only.
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+Path, promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{MaxRequestsInFlight: 4, Timeout: 10 * time.Second}))
	return mux
}

// HTTP counts the requests h serves by method and status code (promhttp
// folds unknown methods into "unknown", so a client cannot add series).
func (m *Metrics) HTTP(h http.Handler) http.Handler {
	return promhttp.InstrumentHandlerCounter(m.httpRequests, h)
}

// Listen opens the metrics listener on addr, which the configuration
// checked (loopback unless metrics.allow_remote); an error names the key.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics.addr: %w", err)
	}
	return ln, nil
}

// Serve serves Handler on ln until ctx is done.
func (m *Metrics) Serve(ctx context.Context, ln net.Listener, log *slog.Logger) {
	srv := &http.Server{Handler: m.Handler(), ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 16 << 10}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("metrics listener stopped", "err", err)
	}
}
