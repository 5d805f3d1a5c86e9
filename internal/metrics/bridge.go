package metrics

import (
	"context"
	"log/slog"
	"net"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/toolwarden/toolwarden/internal/version"
)

// Bridge counts what `toolwarden gemini` asks of the model and spends,
// in a registry of its own (the bridge may drive a server in another
// process, whose metrics are that server's), served by
// `toolwarden gemini --metrics ADDR`.
//
// Its labels are bounded: the model is the one --model names (capped
// all the same), the currency a checked ISO 4217 code, the purpose and
// token kind fixed sets.
type Bridge struct {
	reg      *prometheus.Registry
	models   *capped
	requests *prometheus.CounterVec
	tokens   *prometheus.CounterVec
	spend    *prometheus.CounterVec
}

// maxModels bounds the model label's values.
const maxModels = 8

// bridgePurposes are the purposes a model request is counted under.
var bridgePurposes = map[string]bool{"turn": true, "summary": true}

// NewBridge registers the bridge's collectors, with the Go runtime,
// process and build info collectors.
func NewBridge() *Bridge {
	b := &Bridge{reg: prometheus.NewRegistry(), models: newCapped(maxModels)}
	vec := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "bridge", Name: name, Help: help}, labels)
		b.reg.MustRegister(c)
		return c
	}
	b.requests = vec("requests_total", "Model requests answered, by model and purpose (turn, summary).", "model", "purpose")
	b.tokens = vec("tokens_total", "Tokens of the answered model requests as the API counted them, by model and kind (input, cached_input: part of input, output: thinking included).", "model", "kind")
	b.spend = vec("spend_micros_total", "What the model requests cost, in millionths of the currency (bridge.prices), by model, currency and purpose.", "model", "currency", "purpose")
	b.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), buildInfo(version.Get()))
	return b
}

// BridgeRequest is one answered model request.
type BridgeRequest struct {
	Model, Purpose, Currency   string
	Input, CachedInput, Output int64
	CostMicros                 int64 // with a Currency
}

// Request counts one answered model request: its tokens and, when it is
// priced (a Currency), its cost.
func (b *Bridge) Request(r BridgeRequest) {
	model, purpose := b.models.label(r.Model), r.Purpose
	if !bridgePurposes[purpose] {
		purpose = Other
	}
	b.requests.WithLabelValues(model, purpose).Inc()
	for kind, n := range map[string]int64{"input": r.Input, "cached_input": r.CachedInput, "output": r.Output} {
		if n > 0 {
			b.tokens.WithLabelValues(model, kind).Add(float64(n))
		}
	}
	if r.Currency != "" {
		b.spend.WithLabelValues(model, r.Currency, purpose).Add(float64(r.CostMicros))
	}
}

// Handler serves the bridge's registry at Path.
func (b *Bridge) Handler() http.Handler { return handler(b.reg) }

// Serve serves Handler on ln until ctx is done, to the Hosts checkHost
// lets through (a loopback Host on a loopback listener).
func (b *Bridge) Serve(ctx context.Context, ln net.Listener, log *slog.Logger) {
	serve(ctx, ln, b.Handler(), log)
}
