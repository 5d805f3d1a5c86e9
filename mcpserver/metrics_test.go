package mcpserver_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/internal/metrics"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/mcpserver"
	texec "github.com/toolwarden/toolwarden/tools/exec"
)

// observedServer builds the fixture's server with Prometheus metrics, as
// `toolwarden serve` with metrics.addr does.
func observedServer(t *testing.T, f *fixture) (*mcpserver.Built, *metrics.Metrics) {
	t.Helper()
	audit, err := audit.Open(f.auditPath)
	require.NoError(t, err)
	t.Cleanup(func() { audit.Close() })
	m := metrics.New(nil)
	b, err := mcpserver.BuildObserved(context.Background(), f.cfg, audit, "test", slog.New(slog.NewTextHandler(io.Discard, nil)),
		mcpserver.Observers{Guard: m, Sandbox: m.Runner, WaitingForApproval: m.WaitingForApproval})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	names := make([]string, 0, len(b.Tools))
	for _, tool := range b.Tools {
		names = append(names, tool.Tool.Name)
	}
	m.SetTools(names)
	return b, m
}

// series scrapes m over HTTP and returns "name{k=v,...}" → value, labels
// sorted as the text format writes them.
func series(t *testing.T, m *metrics.Metrics) map[string]float64 {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + metrics.Path)
	require.NoError(t, err)
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	out := map[string]float64{}
	for name, f := range fams {
		for _, s := range f.Metric {
			var labels []string
			for _, l := range s.Label {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			out[name+"{"+strings.Join(labels, ",")+"}"] = sampleValue(s)
		}
	}
	return out
}

func sampleValue(s *dto.Metric) float64 {
	switch {
	case s.Counter != nil:
		return s.Counter.GetValue()
	case s.Gauge != nil:
		return s.Gauge.GetValue()
	case s.Histogram != nil:
		return float64(s.Histogram.GetSampleCount())
	}
	return 0
}

// Approvals asked, approved and declined through elicitation are counted
// from the audit lines, and none is left waiting.
func TestMetricsOfApprovals(t *testing.T) {
	f := newFixture(t)
	withApproval(f, time.Minute)
	b, m := observedServer(t, f)
	h := &human{answer: accept(false)}
	c := clientKinds[0].open(t, b, client.WithElicitationHandler(h))
	require.False(t, callTool(t, c, "write_file", writeArgs("a")).IsError)
	h.says(answer(mcp.ElicitationResponseActionDecline))
	require.True(t, callTool(t, c, "write_file", writeArgs("b")).IsError)
	got := series(t, m)
	require.Equal(t, 2.0, got["toolwarden_approvals_total{channel=-,outcome=needs_approval}"])
	require.Equal(t, 1.0, got["toolwarden_approvals_total{channel=elicit,outcome=approved}"])
	require.Equal(t, 1.0, got["toolwarden_approvals_total{channel=-,outcome=declined}"])
	require.Equal(t, 1.0, got["toolwarden_calls_total{outcome=completed,tool=write_file}"])
	require.Equal(t, 0.0, got["toolwarden_approvals_waiting{}"])
}

// A sandboxed run stopped by its timeout is counted as a limit hit of the
// real backend (root, runsc or bubblewrap).
func TestMetricsOfSandboxRuns(t *testing.T) {
	testenv.Root(t)
	f := newFixture(t)
	withExec(t, f)
	requireSandbox(t, f.cfg.Exec.Backend)
	b, m := observedServer(t, f)
	c := inProcess(t, b)
	res := callTool(t, c, "run_script", map[string]any{"interpreter": "bash", "script": "echo hi"})
	require.False(t, res.IsError)
	var out texec.RunOut
	structured(t, res, &out)
	callTool(t, c, "run_script", map[string]any{"interpreter": "bash", "script": "while :; do :; done", "timeout_seconds": 1})
	got := series(t, m)
	backend := out.Sandbox
	require.Equal(t, 1.0, got["toolwarden_sandbox_runs_total{backend="+backend+",limit=none}"], "%v", got)
	require.Equal(t, 1.0, got["toolwarden_sandbox_runs_total{backend="+backend+",limit=timeout}"])
	require.Equal(t, 2.0, got["toolwarden_sandbox_run_seconds{backend="+backend+"}"])
}
