package mcpserver_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

var benchScripts = map[string]map[string]any{
	"bash_true":   {"interpreter": "bash", "script": "true"},
	"python_pass": {"interpreter": "python", "script": "pass"},
}

// BenchmarkRunScript measures run_script end to end through MCP (protocol,
// guard, audit, sandbox) for the smallest scripts, on each backend in the
// mode the benchmark runs in (root, or rootless as an ordinary user);
// compare with the sandbox package's BenchmarkBareRunsc and
// BenchmarkBareBwrap in the same mode.
func BenchmarkRunScript(b *testing.B) {
	for _, backend := range []string{"runsc", "bwrap"} {
		for name, args := range benchScripts {
			b.Run(backend+"/"+name, func(b *testing.B) {
				_, c := execServerOn(b, backend)
				req := mcp.CallToolRequest{}
				req.Params.Name = "run_script"
				req.Params.Arguments = args
				var took []time.Duration
				for b.Loop() {
					start := time.Now()
					res, err := c.CallTool(context.Background(), req)
					if err != nil || res.IsError {
						b.Fatalf("call failed: %v %+v", err, res)
					}
					took = append(took, time.Since(start))
				}
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			})
		}
	}
}

// BenchmarkRunScriptParallel8 keeps 8 run_script calls in flight on one
// server and reports the throughput.
func BenchmarkRunScriptParallel8(b *testing.B) {
	_, c := execServer(b)
	req := mcp.CallToolRequest{}
	req.Params.Name = "run_script"
	req.Params.Arguments = benchScripts["python_pass"]
	start := time.Now()
	calls := 0
	for b.Loop() {
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Go(func() {
				res, err := c.CallTool(context.Background(), req)
				if err == nil && res.IsError {
					err = context.DeadlineExceeded
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				b.Fatalf("a parallel call failed: %v", err)
			}
		}
		calls += 8
	}
	b.ReportMetric(float64(calls)/time.Since(start).Seconds(), "runs/s")
}
