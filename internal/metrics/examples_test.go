package metrics

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/sandbox"
	"go.yaml.in/yaml/v3"
)

// families are the names of every metric toolwarden serves, each with at
// least one series (a vector shows only once it has one).
func families(t *testing.T) map[string]bool {
	m := New([]string{"read_file"})
	for _, o := range []audit.Outcome{guard.Allow, guard.Deny, guard.NeedsApproval, guard.Approved, guard.OutcomeCompleted} {
		m.Observe(guard.Event{Entry: audit.Entry{Tool: "read_file", Outcome: o}, RedactedBy: map[string]int{"r": 1}})
	}
	m.Observe(guard.Event{Entry: audit.Entry{Tool: "read_file"}, Err: os.ErrClosed})
	_, _ = m.Runner(fakeRunner{}).Run(t.Context(), sandbox.Request{})
	m.HTTP(http.NotFoundHandler()).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	m.ObserveCall("read_file", "2025-11-25", false, nil, time.Millisecond)
	m.Egress("pypi.org", true, "", 1, 1)
	fams, err := m.Registry().Gather()
	require.NoError(t, err)
	out := map[string]bool{}
	for _, f := range fams {
		out[f.GetName()] = true
	}
	return out
}

// metricName matches toolwarden's own metrics and the MCP semantic
// conventions' (mcp.server.operation.duration as Prometheus names it).
var metricName = regexp.MustCompile(`(?:toolwarden|mcp_server)_[a-z_]+`)

// servedHere says whether name is one of toolwarden's metric families
// (its own or the conventions'), which the dashboard must show.
func servedHere(name string) bool {
	return strings.HasPrefix(name, Namespace+"_") || strings.HasPrefix(name, "mcp_server_")
}

// checkNames requires every toolwarden metric expr names to be served
// (a histogram's _bucket, _sum and _count series included).
func checkNames(t *testing.T, have map[string]bool, where, expr string) {
	t.Helper()
	names := metricName.FindAllString(expr, -1)
	require.NotEmpty(t, names, "%s: %s uses no toolwarden metric", where, expr)
	for _, n := range names {
		base := n
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(n, suffix); ok && have[b] {
				base = b
			}
		}
		require.True(t, have[base], "%s: %s is no metric toolwarden serves", where, n)
	}
}

// The shipped alert rules are valid rule files (groups of rules with an
// alert name, an expression, a severity and a summary) over metrics that
// exist.
func TestShippedAlertRules(t *testing.T) {
	data, err := os.ReadFile("../../configs/examples/prometheus-alerts.yml")
	require.NoError(t, err)
	var doc struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	require.NoError(t, dec.Decode(&doc))
	require.Len(t, doc.Groups, 1)
	have := families(t)
	seen := map[string]bool{}
	for _, r := range doc.Groups[0].Rules {
		require.NotEmpty(t, r.Alert)
		require.False(t, seen[r.Alert], "duplicate alert %s", r.Alert)
		seen[r.Alert] = true
		require.Contains(t, []string{"critical", "warning", "info"}, r.Labels["severity"], r.Alert)
		require.NotEmpty(t, r.Annotations["summary"], r.Alert)
		require.Equal(t, strings.Count(r.Expr, "("), strings.Count(r.Expr, ")"), "%s: unbalanced parentheses", r.Alert)
		if r.Alert != "ToolwardenDown" {
			checkNames(t, have, r.Alert, r.Expr)
		}
	}
	require.GreaterOrEqual(t, len(seen), 10)
}

// The shipped Grafana dashboard is JSON whose every query names metrics
// that exist, and whose panels do not overlap.
func TestShippedDashboard(t *testing.T) {
	data, err := os.ReadFile("../../configs/examples/grafana-dashboard.json")
	require.NoError(t, err)
	var dash struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			ID      int                      `json:"id"`
			Title   string                   `json:"title"`
			GridPos struct{ X, Y, W, H int } `json:"gridPos"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(data, &dash))
	require.Equal(t, "toolwarden", dash.Title)
	have := families(t)
	used := map[string]bool{}
	cells := map[[2]int]string{}
	for _, p := range dash.Panels {
		require.NotEmpty(t, p.Targets, p.Title)
		for _, tg := range p.Targets {
			checkNames(t, have, p.Title, tg.Expr)
			for _, n := range metricName.FindAllString(tg.Expr, -1) {
				used[strings.TrimSuffix(n, "_bucket")] = true
			}
		}
		for x := p.GridPos.X; x < p.GridPos.X+p.GridPos.W; x++ {
			for y := p.GridPos.Y; y < p.GridPos.Y+p.GridPos.H; y++ {
				require.Empty(t, cells[[2]int{x, y}], "%q overlaps %q", p.Title, cells[[2]int{x, y}])
				cells[[2]int{x, y}] = p.Title
			}
		}
	}
	for name := range have {
		if servedHere(name) {
			require.True(t, used[name], "the dashboard shows no panel of %s", name)
		}
	}
}

// promtool checks the shipped alert rules and runs their unit tests
// (configs/examples/prometheus-alerts.test.yml: each alert that matters
// fires on its input series and stays quiet on healthy traffic).
// scripts/observability/setup-promtool provides it under scripts/test.
func TestAlertRulesWithPromtool(t *testing.T) {
	promtool := testenv.Need(t, "TOOLWARDEN_TEST_PROMTOOL")[0]
	for _, args := range [][]string{
		{"check", "rules", "prometheus-alerts.yml"},
		{"test", "rules", "prometheus-alerts.test.yml"},
	} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "../../configs/examples"
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "promtool %v:\n%s", args, out)
		require.Contains(t, string(out), "SUCCESS")
	}
}
