package mcpserver

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/metrics"
	"github.com/toolwarden/toolwarden/internal/tracing"
	"github.com/toolwarden/toolwarden/tools"
)

// observers are what watches a serving server: Prometheus metrics when
// metrics.addr is set, OTLP traces when the environment asks for them.
type observers struct {
	Observers
	metrics *metrics.Metrics // nil without metrics.addr
	stop    func()
}

// startObservers opens the metrics listener (before the server is built,
// so a taken port fails the start) and the trace exporter.
func startObservers(ctx context.Context, cfg configs.Config, log *slog.Logger) (*observers, error) {
	shutdown, err := tracing.Setup(ctx, buildInfo.String())
	if err != nil {
		return nil, err
	}
	if tracing.Enabled() {
		log.Info("exporting traces over OTLP/HTTP (OTEL_EXPORTER_OTLP_* environment)")
	}
	o := &observers{stop: func() { flushTraces(shutdown, log) }}
	if cfg.Metrics.Addr == "" {
		return o, nil
	}
	ln, err := metrics.Listen(cfg.Metrics.Addr)
	if err != nil {
		o.stop()
		return nil, err
	}
	m := metrics.New(nil)
	o.metrics = m
	o.Observers = Observers{Guard: m, Sandbox: m.Runner, WaitingForApproval: m.WaitingForApproval, Call: m.ObserveCall,
		Egress: m.Egress}
	ctx, cancel := context.WithCancel(ctx)
	go m.Serve(ctx, ln, log)
	o.stop = func() { cancel(); flushTraces(shutdown, log) }
	log.Info("serving metrics", "url", "http://"+ln.Addr().String()+metrics.Path)
	return o, nil
}

// flushTraces sends the spans still queued.
func flushTraces(shutdown func(context.Context) error, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := shutdown(ctx); err != nil {
		log.Warn("flushing traces failed", "err", err)
	}
}

// knowTools gives the metrics the catalog's tool names.
func (o *observers) knowTools(toolset []tools.Tool) {
	if o.metrics == nil {
		return
	}
	names := make([]string, 0, len(toolset))
	for _, t := range toolset {
		names = append(names, t.Tool.Name)
	}
	o.metrics.SetTools(names)
}

// wrapHTTP counts the MCP listener's requests by status, with metrics on.
func (o *observers) wrapHTTP() func(http.Handler) http.Handler {
	if o.metrics == nil {
		return nil
	}
	return o.metrics.HTTP
}
