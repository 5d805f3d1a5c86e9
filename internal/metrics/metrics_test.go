package metrics

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/sandbox"
)

// scrape serves m's handler over HTTP and parses the text exposition.
func scrape(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + Path)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// value is the value of the series of family name with exactly labels.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	f, ok := fams[name]
	require.True(t, ok, "no family %s", name)
	for _, m := range f.Metric {
		if matches(m, labels) {
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0
}

func matches(m *dto.Metric, labels map[string]string) bool {
	if len(m.Label) != len(labels) {
		return false
	}
	for _, l := range m.Label {
		if labels[l.GetName()] != l.GetValue() {
			return false
		}
	}
	return true
}

func line(tool string, outcome audit.Outcome, rule string) guard.Event {
	return guard.Event{Entry: audit.Entry{Tool: tool, Outcome: outcome, Rule: rule, DurationMS: 0.2}}
}

func TestObserveCountsAuditLines(t *testing.T) {
	m := New([]string{"read_file", "write_file"})
	for _, ev := range []guard.Event{
		line("read_file", guard.Allow, "allowed"),
		line("read_file", guard.OutcomeCompleted, "allowed"),
		line("read_file", guard.Allow, "allowed"),
		{Entry: audit.Entry{Tool: "read_file", Outcome: guard.OutcomeFailed, Code: "not_found", DurationMS: 3}},
		line("read_file", guard.Deny, "path.inside_workspace"),
		line("write_file", guard.NeedsApproval, "approval.elicit"),
		{Entry: audit.Entry{Tool: "write_file", Outcome: guard.Approved, Rule: "approval.terminal", DecidedBy: "terminal uid=1000"}},
		{Entry: audit.Entry{Tool: "write_file", Outcome: guard.OutcomeCompleted}, RedactedBy: map[string]int{"aws-access-token": 2, "github-pat": 1}},
		{Entry: audit.Entry{Tool: "write_file", Outcome: guard.Declined, Rule: "approval.timeout"}},
		{Entry: audit.Entry{Tool: "write_file", Outcome: guard.Approved, Rule: "approval.elicit"}},
		{Entry: audit.Entry{Tool: "write_file", Outcome: guard.Approved, Rule: "approval.session"}},
		{Entry: audit.Entry{Tool: "read_file", Outcome: guard.Allow}, Err: errors.New("disk full")},
		{Entry: guard.StartEntry("abc", "dev")},
	} {
		m.Observe(ev)
	}
	f := scrape(t, m)
	calls := func(tool, outcome string) float64 {
		return value(t, f, "toolwarden_calls_total", map[string]string{"tool": tool, "outcome": outcome})
	}
	require.Equal(t, 2.0, calls("read_file", "allowed"), "the line that failed to be written is not counted as allowed")
	require.Equal(t, 1.0, calls("read_file", "completed"))
	require.Equal(t, 1.0, calls("read_file", "failed"))
	require.Equal(t, 1.0, calls("read_file", "denied"))
	require.Equal(t, 1.0, value(t, f, "toolwarden_denials_total", map[string]string{"tool": "read_file", "rule": "path.inside_workspace"}))
	require.Equal(t, 3.0, value(t, f, "toolwarden_guard_decision_seconds", map[string]string{"outcome": "allowed"})+
		value(t, f, "toolwarden_guard_decision_seconds", map[string]string{"outcome": "denied"}))
	require.Equal(t, 1.0, value(t, f, "toolwarden_call_duration_seconds", map[string]string{"tool": "read_file", "outcome": "failed"}))
	require.Equal(t, 1.0, value(t, f, "toolwarden_approvals_total", map[string]string{"outcome": "needs_approval", "channel": "-"}))
	require.Equal(t, 1.0, value(t, f, "toolwarden_approvals_total", map[string]string{"outcome": "approved", "channel": "terminal"}))
	require.Equal(t, 1.0, value(t, f, "toolwarden_approvals_total", map[string]string{"outcome": "declined", "channel": "-"}))
	require.Equal(t, 1.0, value(t, f, "toolwarden_approvals_total", map[string]string{"outcome": "approved", "channel": "elicit"}))
	require.Equal(t, 1.0, value(t, f, "toolwarden_approvals_total", map[string]string{"outcome": "approved", "channel": "session"}))
	require.Equal(t, 2.0, value(t, f, "toolwarden_redactions_total", map[string]string{"rule": "aws-access-token"}))
	require.Equal(t, 1.0, value(t, f, "toolwarden_redactions_total", map[string]string{"rule": "github-pat"}))
	require.Equal(t, 1.0, value(t, f, "toolwarden_audit_write_errors_total", nil))
	require.Equal(t, 1.0, value(t, f, "toolwarden_build_info", labelsOf(f["toolwarden_build_info"].Metric[0])))
	require.NotContains(t, f["toolwarden_calls_total"].String(), `"-"`, "start lines are no calls")
	require.Contains(t, f, "go_goroutines")
	require.Contains(t, f, "process_resident_memory_bytes")
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.Label {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// Label values never come from a client: an unknown tool name is
// "_other", and rule values are capped.
func TestLabelsAreBounded(t *testing.T) {
	m := New([]string{"read_file"})
	for i := range 3 * maxRules {
		name := "evil_" + strings.Repeat("x", i%7) + string(rune('a'+i%26))
		m.Observe(line(name, guard.Deny, "tool.known"))
		m.Observe(line("read_file", guard.Deny, fmt.Sprintf("rule.%d", i)))
	}
	f := scrape(t, m)
	for _, series := range f["toolwarden_calls_total"].Metric {
		require.Contains(t, []string{"read_file", Other}, labelsOf(series)["tool"])
	}
	require.Equal(t, float64(3*maxRules), value(t, f, "toolwarden_calls_total", map[string]string{"tool": Other, "outcome": "denied"}))
	require.LessOrEqual(t, len(f["toolwarden_denials_total"].Metric), maxRules+2, "rule values are capped, then _other")
	for _, fam := range f {
		require.False(t, strings.Contains(fam.String(), "evil_"), "an unknown tool makes no series of its own (%s)", fam.GetName())
	}
}

type fakeRunner struct {
	res sandbox.Result
	err error
}

func (f fakeRunner) Run(context.Context, sandbox.Request) (sandbox.Result, error) {
	return f.res, f.err
}
func (fakeRunner) Name() string { return "fake" }

func TestSandboxRuns(t *testing.T) {
	m := New(nil)
	for _, r := range []fakeRunner{{res: sandbox.Result{Duration: time.Millisecond}}, {res: sandbox.Result{Limit: sandbox.LimitMemory}},
		{res: sandbox.Result{Limit: sandbox.LimitMemory}}, {err: errors.New("runsc failed")}} {
		_, _ = m.Runner(r).Run(t.Context(), sandbox.Request{})
	}
	f := scrape(t, m)
	require.Equal(t, 1.0, value(t, f, "toolwarden_sandbox_runs_total", map[string]string{"backend": "fake", "limit": "none"}))
	require.Equal(t, 2.0, value(t, f, "toolwarden_sandbox_runs_total", map[string]string{"backend": "fake", "limit": "memory"}))
	require.Equal(t, 1.0, value(t, f, "toolwarden_sandbox_runs_total", map[string]string{"backend": "fake", "limit": "error"}))
	require.Equal(t, 3.0, value(t, f, "toolwarden_sandbox_run_seconds", map[string]string{"backend": "fake"}))
}

// HTTP statuses are counted; a made-up method is "unknown", not a series.
func TestHTTPRequestsByStatus(t *testing.T) {
	m := New(nil)
	h := m.HTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/denied" {
			http.Error(w, "no", http.StatusUnauthorized)
		}
	}))
	for _, r := range []*http.Request{httptest.NewRequest("POST", "/mcp", nil), httptest.NewRequest("POST", "/denied", nil),
		httptest.NewRequest("EVIL-METHOD-123", "/mcp", nil)} {
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	f := scrape(t, m)
	require.Equal(t, 1.0, value(t, f, "toolwarden_http_requests_total", map[string]string{"method": "post", "code": "200"}))
	require.Equal(t, 1.0, value(t, f, "toolwarden_http_requests_total", map[string]string{"method": "post", "code": "401"}))
	require.Equal(t, 1.0, value(t, f, "toolwarden_http_requests_total", map[string]string{"method": "unknown", "code": "200"}))
}

func TestWaitingForApproval(t *testing.T) {
	m := New(nil)
	done := m.WaitingForApproval()
	require.Equal(t, 1.0, value(t, scrape(t, m), "toolwarden_approvals_waiting", nil))
	done()
	require.Equal(t, 0.0, value(t, scrape(t, m), "toolwarden_approvals_waiting", nil))
}

// Only GET /metrics is served.
func TestHandlerServesOnlyMetrics(t *testing.T) {
	srv := httptest.NewServer(New(nil).Handler())
	defer srv.Close()
	for _, p := range []string{"/", "/debug/pprof/", "/metrics/x"} {
		resp, err := http.Get(srv.URL + p)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusNotFound, resp.StatusCode, p)
	}
	resp, err := http.Post(srv.URL+Path, "text/plain", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

// TestEgressCounters: a connection is counted by its host only when it
// was allowed; every refused one is "other", so what a sandbox asks for
// never becomes a series.
func TestEgressCounters(t *testing.T) {
	m := New(nil)
	m.Egress("localhost", true, "", 120, 4000)
	m.Egress("localhost", true, "limits.max_bytes_down", 10, 20)
	for i := range 50 {
		m.Egress(fmt.Sprintf("attacker-%d.test", i), false, "exec.network.allow", 0, 0)
	}
	fams := scrape(t, m)
	require.Equal(t, 1.0, value(t, fams, "toolwarden_egress_connections_total", map[string]string{"host": "localhost", "outcome": "allowed", "rule": "none"}))
	require.Equal(t, 1.0, value(t, fams, "toolwarden_egress_connections_total", map[string]string{"host": "localhost", "outcome": "allowed", "rule": "limits.max_bytes_down"}))
	require.Equal(t, 50.0, value(t, fams, "toolwarden_egress_connections_total", map[string]string{"host": "other", "outcome": "denied", "rule": "exec.network.allow"}))
	require.Len(t, fams["toolwarden_egress_connections_total"].Metric, 3, "refused names are no label values")
	require.Equal(t, 130.0, value(t, fams, "toolwarden_egress_bytes_total", map[string]string{"host": "localhost", "direction": "up"}))
	require.Equal(t, 4020.0, value(t, fams, "toolwarden_egress_bytes_total", map[string]string{"host": "localhost", "direction": "down"}))
}
