package socket

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/approvals"
)

// BenchmarkDecisionRoundTrip measures, over the real control socket, the
// time from `approvals approve`'s request (an open connection) to the
// waiting call seeing the decision; p50-ms is the median.
func BenchmarkDecisionRoundTrip(b *testing.B) {
	hub := approvals.New()
	s, err := Listen(hub, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() { _ = s.Serve(ctx) }()
	c, err := Dial(s.Path())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	events, cancel := hub.Subscribe()
	defer cancel()
	var took []time.Duration
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprint("b", i)
		now := time.Now()
		req := approvals.Request{ID: id, Tool: "write_file", Digest: "d", Session: "s", Preview: "x", Created: now, Expires: now.Add(time.Minute)}
		seen := make(chan time.Time, 1)
		go func() { _, _ = hub.Ask(context.Background(), req); seen <- time.Now() }()
		for e := range events {
			if e.Kind == "pending" && e.Request.ID == id {
				break
			}
		}
		start := time.Now()
		if err := c.Decide(id, "d", true, ""); err != nil {
			b.Fatal(err)
		}
		took = append(took, (<-seen).Sub(start))
		<-events // done
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
}
