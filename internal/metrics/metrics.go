// Package metrics counts what the server does for Prometheus: calls by
// tool and outcome, denials by rule, guard and call latency, approvals,
// redactions, sandbox runs and HTTP requests, in a registry of its own
// served at /metrics on a separate listener (metrics.addr).
//
// Every label value comes from the server's own vocabulary, never from a
// client: tool names from the catalog (any other name counts as "_other"),
// rules and redaction rule IDs from the configuration (capped), outcomes
// and status codes from fixed sets. A client sending random tool names
// cannot grow the series.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/toolwarden/toolwarden/internal/version"
)

// Namespace prefixes every metric's name.
const Namespace = "toolwarden"

// Metrics holds the server's collectors and the registry they are in.
type Metrics struct {
	reg   *prometheus.Registry
	tools map[string]bool
	rules *capped
	// redactionRules caps the output filter's rule IDs (operator rules
	// may add some).
	redactionRules *capped

	calls            *prometheus.CounterVec
	denials          *prometheus.CounterVec
	decision         *prometheus.HistogramVec
	callDuration     *prometheus.HistogramVec
	approvalsWaiting prometheus.Gauge
	approvals        *prometheus.CounterVec
	redactions       *prometheus.CounterVec
	auditErrors      prometheus.Counter
	sandboxRuns      *prometheus.CounterVec
	sandboxDuration  *prometheus.HistogramVec
	httpRequests     *prometheus.CounterVec
	operation        *prometheus.HistogramVec
	egress           *egress
}

// maxRules bounds the distinct rule label values; more count as "_other".
const maxRules = 256

// Other is the label value of a tool not in the catalog, and of rules
// past the cap.
const Other = "_other"

// New registers the collectors for the tools named (the catalog the
// server serves; SetTools may name them later), with the Go runtime,
// process and build info collectors.
func New(tools []string) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), tools: map[string]bool{}, rules: newCapped(maxRules), redactionRules: newCapped(maxRules)}
	m.SetTools(tools)
	m.calls = m.counterVec("calls_total", "Audit lines of tool calls by tool and outcome (allowed, denied, needs_approval, approved, declined, completed, failed, completed_late, abandoned).", "tool", "outcome")
	m.denials = m.counterVec("denials_total", "Calls denied, by tool and the rule that denied them.", "tool", "rule")
	m.decision = m.histogramVec("guard_decision_seconds", "Time the guard took to decide a call, from its arrival to its decision's audit line.", guardBuckets, "outcome")
	m.callDuration = m.histogramVec("call_duration_seconds", "Time from a call's admission to its end (handler, filter, audit), by tool and outcome.", callBuckets, "tool", "outcome")
	m.approvalsWaiting = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "approvals_waiting",
		Help: "Calls waiting in this process for a human's approval (a 2026-07-28 client waits on its side: see approvals_total)."})
	m.approvals = m.counterVec("approvals_total", "Approval requests asked (outcome needs_approval) and answered (approved, declined), by channel.", "outcome", "channel")
	m.redactions = m.counterVec("redactions_total", "Secrets the output filter redacted from results, by rule ID.", "rule")
	m.auditErrors = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "audit_write_errors_total",
		Help: "Audit lines that could not be written (their call was denied or its result withheld: audit.write)."})
	m.sandboxRuns = m.counterVec("sandbox_runs_total", "Sandboxed program runs by backend and the limit that stopped them (none, timeout, memory, output, pids, canceled, error).", "backend", "limit")
	m.sandboxDuration = m.histogramVec("sandbox_run_seconds", "Duration of sandboxed runs, by backend.", callBuckets, "backend")
	m.egress = m.newEgress()
	m.httpRequests = m.counterVec("http_requests_total", "HTTP requests to the MCP listener by method and status code.", "method", "code")
	m.operation = newOperation(m.reg)
	m.reg.MustRegister(m.approvalsWaiting, m.auditErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		buildInfo(version.Get()))
	return m
}

// Registry is the registry the collectors are in.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Buckets in seconds: a decision takes microseconds, a call up to minutes.
var (
	guardBuckets = prometheus.ExponentialBuckets(0.00001, 4, 9) // 10µs .. ~0.65s
	callBuckets  = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300}
)

func (m *Metrics) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
	m.reg.MustRegister(c)
	return c
}

func (m *Metrics) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: name, Help: help, Buckets: buckets}, labels)
	m.reg.MustRegister(h)
	return h
}

// buildInfo is the constant toolwarden_build_info 1 with the build's
// version, commit and Go version as labels.
func buildInfo(v version.Info) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: "build_info",
		Help:        "The running build: version, commit and Go toolchain (always 1).",
		ConstLabels: prometheus.Labels{"version": v.Version, "commit": v.Commit, "goversion": v.GoVersion}},
		func() float64 { return 1 })
}

// tool is the label of a tool name: the name when the catalog has it.
func (m *Metrics) tool(name string) string {
	if m.tools[name] {
		return name
	}
	return Other
}

// SetTools names the tools of the catalog the server serves: only these
// are tool label values. Call it before the server serves calls.
func (m *Metrics) SetTools(names []string) {
	for _, t := range names {
		m.tools[t] = true
	}
}
