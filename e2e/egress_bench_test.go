package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/egress/egresstest"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// egressBenchScript times, in python, n HTTPS requests each on a new
// connection (the set-up: through the proxy, CONNECT, the SNI check and
// the tunnel; direct, TCP and TLS) and one download of the big file,
// and prints the p50 and the throughput as JSON. "direct" ignores the
// proxy variables: the same script run on the host, without a sandbox.
const egressBenchScript = `
import json, ssl, sys, time, urllib.request
url, ca, n, direct = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "direct"
handlers = [urllib.request.HTTPSHandler(context=ssl.create_default_context(cadata=ca))]
if direct:
    handlers.append(urllib.request.ProxyHandler({}))
opener = urllib.request.build_opener(*handlers)
times = []
for _ in range(n):
    t = time.perf_counter()
    with opener.open(url + "small", timeout=30) as r:
        r.read()
    times.append((time.perf_counter() - t) * 1000)
times.sort()
total, t = 0, time.perf_counter()
with opener.open(url + "big", timeout=60) as r:
    while True:
        b = r.read(1 << 20)
        if not b:
            break
        total += len(b)
print(json.dumps({"p50_ms": times[len(times) // 2], "bytes": total, "seconds": time.perf_counter() - t}))
`

// egressBenchBytes is the size of the download.
const egressBenchBytes = 100 << 20

type egressBenchResult struct {
	P50MS   float64 `json:"p50_ms"`
	Bytes   int     `json:"bytes"`
	Seconds float64 `json:"seconds"`
}

func (r egressBenchResult) mbps() float64 { return float64(r.Bytes) / 1e6 / r.Seconds }

// BenchmarkEgressPath measures the whole egress path (a run_script's
// sandbox, its forwarder, the server's proxy, a local HTTPS server)
// against the same python script run on the host, connecting directly,
// in the same run: the p50 of 20 connection set-ups (each a new
// connection with one small request), and a 100 MB download's
// throughput. It also times a whole run_script of "pass" with and
// without a network block (the sandbox's set-up). As root, runsc and
// bwrap:
//
//	go test -run '^$' -bench BenchmarkEgressPath -benchtime 3x ./e2e/
func BenchmarkEgressPath(b *testing.B) {
	testenv.Root(b)
	ca := egresstest.NewCA(b)
	big := bytes.Repeat([]byte("0123456789abcdef"), egressBenchBytes/16)
	mux := http.NewServeMux()
	mux.HandleFunc("/small", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(big)))
		_, _ = w.Write(big)
	})
	port := egresstest.Port(ca.Server(b, mux, "localhost"))
	url := "https://localhost:" + port + "/"
	args := []string{url, string(ca.PEM), "20"}

	for _, backend := range []string{"runsc", "bwrap"} {
		b.Run(backend, func(b *testing.B) {
			withNet := benchServer(b, backend, fmt.Sprintf("exec:\n  interpreters: [python]\n  network:\n    allow: [\"localhost:%s\"]\n", port))
			without := benchServer(b, backend, "exec:\n  interpreters: [python]\n")
			var direct, proxied []egressBenchResult
			var runNet, runNone []float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				out, err := exec.Command("/usr/bin/python3", append([]string{"-c", egressBenchScript}, append(args, "direct")...)...).Output()
				require.NoError(b, err)
				direct = append(direct, decodeBench(b, string(out)))
				stdout, _ := runPython(b, withNet, egressBenchScript, append(args, "proxy"), 60)
				proxied = append(proxied, decodeBench(b, stdout))
				runNet = append(runNet, timeRun(b, withNet))
				runNone = append(runNone, timeRun(b, without))
			}
			b.StopTimer()
			pick := func(rs []egressBenchResult, f func(egressBenchResult) float64) float64 {
				v := make([]float64, len(rs))
				for i, r := range rs {
					v[i] = f(r)
				}
				return median(v)
			}
			p50 := func(r egressBenchResult) float64 { return r.P50MS }
			mbps := func(r egressBenchResult) float64 { return r.mbps() }
			b.ReportMetric(pick(direct, p50), "setup-p50-ms-direct")
			b.ReportMetric(pick(proxied, p50), "setup-p50-ms-proxy")
			b.ReportMetric(pick(direct, mbps), "MB/s-direct")
			b.ReportMetric(pick(proxied, mbps), "MB/s-proxy")
			b.ReportMetric(pick(proxied, mbps)/pick(direct, mbps), "throughput-ratio")
			b.ReportMetric(median(runNet), "run-ms-network")
			b.ReportMetric(median(runNone), "run-ms-none")
		})
	}
}

func decodeBench(t testing.TB, out string) egressBenchResult {
	t.Helper()
	var r egressBenchResult
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	require.Equal(t, egressBenchBytes, r.Bytes, "the whole download arrived")
	return r
}

// benchServer starts serve for run_script on backend with config body.
func benchServer(b *testing.B, backend, config string) *client.Client {
	b.Helper()
	parent := b.TempDir()
	ws := filepath.Join(parent, "ws")
	require.NoError(b, os.Mkdir(ws, 0o755))
	cfg := filepath.Join(parent, "toolwarden.yaml")
	require.NoError(b, os.WriteFile(cfg, []byte(config), 0o600))
	env := append(cleanEnv(), "TOOLWARDEN_AUDIT_PATH="+filepath.Join(parent, "audit.jsonl"), "HOME="+parent,
		"TOOLWARDEN_EXEC_STATE_DIR="+filepath.Join(os.TempDir(), "toolwarden-test-sandbox", "e2e"),
		"TOOLWARDEN_EXEC_BACKEND="+backend)
	c, err := client.NewStdioMCPClient(binary, env, append([]string{"serve", "--config", cfg, "--workspace", ws}, runScriptArgs...)...)
	require.NoError(b, err)
	b.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	_, err = c.Initialize(ctx, init)
	require.NoError(b, err)
	runPython(b, c, "pass", nil, 60) // the first run boots what later ones reuse
	return c
}

// timeRun is the median wall time, in ms, of 5 run_script calls of "pass".
func timeRun(b *testing.B, c *client.Client) float64 {
	var ms []float64
	for range 5 {
		start := time.Now()
		runPython(b, c, "pass", nil, 60)
		ms = append(ms, float64(time.Since(start).Microseconds())/1000)
	}
	return median(ms)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
