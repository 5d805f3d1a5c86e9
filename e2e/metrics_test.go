package e2e

import (
	"io"
	"net"
	"net/http"
	"os/exec"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// scrapeMetrics GETs /metrics over HTTP and parses it with the
// Prometheus text parser.
func scrapeMetrics(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// counter is the value of the counter name{labels}, 0 when it has no such series.
func counter(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	for _, m := range fams[name].GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if len(got) == len(labels) && func() bool {
			for k, v := range labels {
				if got[k] != v {
					return false
				}
			}
			return true
		}() {
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// TestMetricsBinary: the built binary serves /metrics on metrics.addr,
// and its counters match the calls a real MCP client made over HTTP:
// allowed and completed, denied by rule, failed; an unknown tool name a
// client sends creates no series.
func TestMetricsBinary(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	metricsAddr := freeAddr(t)
	base := startHTTP(t, ws, append(env, "TOOLWARDEN_METRICS_ADDR="+metricsAddr))
	c, err := client.NewStreamableHttpClient(base+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer e2e-token-0123456789"}))
	require.NoError(t, err)
	require.NoError(t, c.Start(ctxT(t)))
	defer c.Close()
	initialize(t, c)
	call := func(name, path string) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, map[string]any{"path": path}
		res, err := c.CallTool(ctxT(t), req)
		if err != nil {
			return nil
		}
		return res
	}
	for range 3 {
		require.False(t, call("read_file", "hello.txt").IsError)
	}
	for range 2 {
		require.True(t, call("read_file", "../outside.txt").IsError)
	}
	require.True(t, call("read_file", "missing.txt").IsError)
	call("evil_tool_4f9a", "x")

	fams := scrapeMetrics(t, metricsAddr)
	calls := func(outcome string) float64 {
		return counter(fams, "toolwarden_calls_total", map[string]string{"tool": "read_file", "outcome": outcome})
	}
	require.Equal(t, 4.0, calls("allowed"), "three reads and the missing file were allowed")
	require.Equal(t, 3.0, calls("completed"))
	require.Equal(t, 1.0, calls("failed"), "the missing file failed in the handler")
	require.Equal(t, 2.0, calls("denied"))
	require.Equal(t, 2.0, counter(fams, "toolwarden_denials_total", map[string]string{"tool": "read_file", "rule": "path.inside_workspace"}))
	require.GreaterOrEqual(t, counter(fams, "toolwarden_http_requests_total", map[string]string{"method": "post", "code": "200"}), 7.0)
	require.Contains(t, fams, "toolwarden_build_info")
	require.Equal(t, uint64(3), histogramCount(fams, "toolwarden_call_duration_seconds", "completed"))
	// The MCP semantic conventions' mcp.server.operation.duration: every
	// call, its isError results as error_type tool_error.
	require.Equal(t, map[string]uint64{"": 3, "tool_error": 3}, operationCounts(fams, "read_file"))
	for name, fam := range fams {
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				require.NotContains(t, l.GetValue(), "evil_tool", "%s: a client's tool name is no label value", name)
			}
		}
	}
}

// operationCounts are the observations of
// mcp_server_operation_duration_seconds of tool, by error_type.
func operationCounts(fams map[string]*dto.MetricFamily, tool string) map[string]uint64 {
	out := map[string]uint64{}
	for _, m := range fams["mcp_server_operation_duration_seconds"].GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		if l["gen_ai_tool_name"] == tool && l["mcp_method_name"] == "tools/call" && l["mcp_protocol_version"] != "_other" {
			out[l["error_type"]] += m.GetHistogram().GetSampleCount()
		}
	}
	return out
}

func histogramCount(fams map[string]*dto.MetricFamily, name, outcome string) uint64 {
	for _, m := range fams[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "outcome" && l.GetValue() == outcome {
				return m.GetHistogram().GetSampleCount()
			}
		}
	}
	return 0
}

// A metrics listener off loopback without metrics.allow_remote is a
// start-up error naming the key.
func TestMetricsBinaryRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	cmd := exec.Command(binary, "serve", "--workspace", ws, "--http", "127.0.0.1:0")
	cmd.Env = append(env, "TOOLWARDEN_METRICS_ADDR=0.0.0.0:0", "TOOLWARDEN_HTTP_TOKEN=e2e-token-0123456789")
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "metrics.addr")
	require.Contains(t, string(out), "not a loopback address")
	require.Contains(t, string(out), "metrics.allow_remote")
}

// A metrics port already taken fails the start, naming the key, before
// the server is built.
func TestMetricsBinaryPortTaken(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	cmd := exec.Command(binary, "serve", "--workspace", ws, "--http", "127.0.0.1:0")
	cmd.Env = append(env, "TOOLWARDEN_METRICS_ADDR="+ln.Addr().String(), "TOOLWARDEN_HTTP_TOKEN=e2e-token-0123456789")
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "metrics.addr: listen tcp "+ln.Addr().String())
	require.Contains(t, string(out), "address already in use")
}

// TestMetricsCountTerminalDecisions: a call approved and one denied with
// `toolwarden approvals` are counted under channel="terminal", as the
// audit line's decided_by ("terminal uid=N") says.
func TestMetricsCountTerminalDecisions(t *testing.T) {
	t.Parallel()
	metricsAddr := freeAddr(t)
	c, _, env := terminalServer(t, "TOOLWARDEN_METRICS_ADDR="+metricsAddr)
	for _, verb := range []string{"approve", "deny"} {
		res := writeAsync(t, c, "notes/"+verb+".txt", "x\n")
		out, err := approvalsCLI(t, env, verb, waitingID(t, env))
		require.NoError(t, err, out)
		<-res
	}
	require.Contains(t, auditLines(t, env), `"decided_by":"terminal uid=`)
	fams := scrapeMetrics(t, metricsAddr)
	for _, outcome := range []string{"approved", "declined"} {
		require.Equal(t, 1.0, counter(fams, "toolwarden_approvals_total", map[string]string{"outcome": outcome, "channel": "terminal"}),
			"%s on the terminal; the series: %v", outcome, fams["toolwarden_approvals_total"].GetMetric())
	}
}

// TestMetricsBinaryRefusesForeignHost: a DNS-rebinding page reaches the
// loopback metrics listener under its own name, so /metrics answers only a
// loopback Host, as the MCP listener and the approval page do.
func TestMetricsBinaryRefusesForeignHost(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	metricsAddr := freeAddr(t)
	startHTTP(t, ws, append(env, "TOOLWARDEN_METRICS_ADDR="+metricsAddr))
	_, port, err := net.SplitHostPort(metricsAddr)
	require.NoError(t, err)
	get := func(host string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, "http://"+metricsAddr+"/metrics", nil)
		require.NoError(t, err)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1.nip.io:" + port, "10.0.0.1:" + port} {
		code, body := get(host)
		require.Equal(t, http.StatusForbidden, code, "Host %s: %s", host, body)
		require.Contains(t, body, "forbidden: Host")
		require.NotContains(t, body, "toolwarden_", "no metric is served to Host %s", host)
	}
	for _, host := range []string{metricsAddr, "localhost:" + port, "[::1]:" + port} {
		code, body := get(host)
		require.Equal(t, http.StatusOK, code, "Host %s: %s", host, body)
		require.Contains(t, body, "toolwarden_build_info")
	}
}
