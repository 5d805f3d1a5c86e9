package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/toolwarden/toolwarden/internal/hostcheck"
)

// Path is where the metrics are served.
const Path = "/metrics"

// Handler serves the registry in the Prometheus exposition formats, at
// Path only.
func (m *Metrics) Handler() http.Handler { return handler(m.reg) }

func handler(reg *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+Path, promhttp.HandlerFor(reg, promhttp.HandlerOpts{MaxRequestsInFlight: 4, Timeout: 10 * time.Second}))
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

// Serve serves Handler on ln until ctx is done, to the Hosts
// checkHost(ln) lets through.
func (m *Metrics) Serve(ctx context.Context, ln net.Listener, log *slog.Logger) {
	serve(ctx, ln, m.Handler(), log)
}

// serve serves h on ln until ctx is done, to the Hosts checkHost(ln)
// lets through.
func serve(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger) {
	srv := &http.Server{Handler: checkHost(ln.Addr(), h), ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 16 << 10}
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

// checkHost refuses a request whose Host a DNS-rebinding page could have
// sent, decided by the address the listener has. On loopback (the
// default) the Host must be loopback too: localhost or a loopback IP, as
// on the MCP listener. Off loopback (metrics.allow_remote) a scraper
// reaches the listener from elsewhere, so any IP address is a fair Host,
// but a name is not: a rebinding page can send only its own name, and
// Prometheus' service discovery scrapes by IP (a scraper that names the
// host must put an IP or the address in its target instead).
func checkHost(addr net.Addr, next http.Handler) http.Handler {
	if tcp, ok := addr.(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		return hostcheck.Handler(func(hostport string) bool {
			return hostcheck.Loopback(hostport) || hostcheck.IPLiteral(hostport)
		}, "metrics.allow_remote: an IP address or localhost, never a name, against DNS rebinding", next)
	}
	return hostcheck.Handler(hostcheck.Loopback, "metrics.addr is loopback: a loopback Host only, against DNS rebinding", next)
}
