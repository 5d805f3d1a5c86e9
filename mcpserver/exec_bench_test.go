package mcpserver_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/configs"
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

// BenchmarkRunScriptWarmPool compares `python -c pass` through MCP on
// gVisor without and with sandboxes booted ahead (exec.warm_pool 0 and 2):
// each iteration is a round of 5 calls on a server of each, in turn, so
// that the machine's load falls on both alike. It reports each one's p50
// over all calls and the median of the rounds' warm/cold ratios. Calls
// go back to back (each warm run then shares the machine with the boot
// that refills the pool), or 300 ms apart, like a model's calls, which
// leaves the pool time to refill. Run as an ordinary user, it measures
// rootless gVisor.
func BenchmarkRunScriptWarmPool(b *testing.B) {
	_, cold := execServerOn(b, "runsc", func(c *configs.Config) { c.Exec.WarmPool = 0 })
	_, warm := execServerOn(b, "runsc", func(c *configs.Config) { c.Exec.WarmPool = 2 })
	for _, c := range []*client.Client{cold, warm} {
		// As a client does first: the pool boots once run_script is offered.
		if _, err := c.ListTools(context.Background(), mcp.ListToolsRequest{}); err != nil {
			b.Fatal(err)
		}
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "run_script"
	req.Params.Arguments = benchScripts["python_pass"]
	call := func(c *client.Client) time.Duration {
		start := time.Now()
		res, err := c.CallTool(context.Background(), req)
		if err != nil || res.IsError {
			b.Fatalf("call failed: %v %+v", err, res)
		}
		return time.Since(start)
	}
	for _, pause := range []time.Duration{0, 300 * time.Millisecond} {
		name := "back_to_back"
		if pause > 0 {
			name = pause.String() + "_apart"
		}
		b.Run(name, func(b *testing.B) {
			var all [2][]time.Duration
			var ratios []float64
			for b.Loop() {
				var round [2][]time.Duration
				for i, c := range []*client.Client{cold, warm} {
					for range 5 {
						time.Sleep(pause)
						round[i] = append(round[i], call(c))
					}
					all[i] = append(all[i], round[i]...)
				}
				ratios = append(ratios, float64(p50(round[1]))/float64(p50(round[0])))
			}
			slices.Sort(ratios)
			b.ReportMetric(float64(p50(all[0]).Microseconds())/1000, "cold-p50-ms")
			b.ReportMetric(float64(p50(all[1]).Microseconds())/1000, "warm-p50-ms")
			b.ReportMetric(ratios[len(ratios)/2], "warm/cold")
		})
	}
}

func p50(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}
