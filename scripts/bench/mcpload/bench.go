package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// bench issues tools/call requests against one initialized client.
type bench struct {
	client   *client.Client
	cfg      config
	reported atomic.Bool // first error text already printed
}

// runResult is the outcome of one batch of calls.
type runResult struct {
	latencies []time.Duration // successful and failed calls alike
	errors    int
	elapsed   time.Duration
}

// run performs count calls spread over cfg.concurrency workers.
func (b *bench) run(ctx context.Context, count int) runResult {
	if count == 0 {
		return runResult{}
	}
	lat := make([]time.Duration, count)
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range min(b.cfg.concurrency, count) {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(count) {
					return
				}
				d, err := b.call(ctx)
				lat[i] = d
				if err != nil {
					failed.Add(1)
					b.reportError(err)
				}
			}
		})
	}
	wg.Wait()
	return runResult{latencies: lat, errors: int(failed.Load()), elapsed: time.Since(start)}
}

// call performs one timed tools/call and converts isError results into errors.
func (b *bench) call(ctx context.Context) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.timeout)
	defer cancel()
	start := time.Now()
	res, err := b.client.CallTool(ctx, b.cfg.callRequest())
	d := time.Since(start)
	if err != nil {
		return d, err
	}
	if res.IsError {
		return d, errors.New("tool error: " + resultText(res))
	}
	return d, nil
}

// reportError prints only the first error seen, to keep output readable.
func (b *bench) reportError(err error) {
	if b.reported.CompareAndSwap(false, true) {
		fmt.Fprintln(os.Stderr, "mcpload: first error:", err)
	}
}

// resultText concatenates the text content blocks of a tool result.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			parts = append(parts, tc.Text)
		}
	}
	if len(parts) == 0 {
		return "(no text content)"
	}
	return strings.Join(parts, "\n")
}
