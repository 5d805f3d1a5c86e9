package page

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/approvals"
)

// BenchmarkDecisionRoundTrip measures, over a real loopback listener, the
// time from the page's Approve POST to the waiting call seeing the
// decision; p50-ms is the median.
func BenchmarkDecisionRoundTrip(b *testing.B) {
	s := serve(b)
	events, cancel := s.hub.Subscribe()
	defer cancel()
	var took []time.Duration
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprint("b", i)
		now := time.Now()
		req := approvals.Request{ID: id, Tool: "write_file", Digest: "d", Session: "s", Preview: "x", Created: now, Expires: now.Add(time.Minute)}
		seen := make(chan time.Time, 1)
		go func() { _, _ = s.hub.Ask(context.Background(), req); seen <- time.Now() }()
		for e := range events {
			if e.Kind == "pending" && e.Request.ID == id {
				break
			}
		}
		form := s.form(req, "approve")
		start := time.Now()
		hr, _ := http.NewRequest(http.MethodPost, s.base+pathDecide, strings.NewReader(form.Encode()))
		hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		hr.Header.Set("Origin", s.origin)
		res, err := s.browser.Do(hr)
		if err != nil || res.StatusCode != http.StatusSeeOther {
			b.Fatalf("decide: %v %v", err, res)
		}
		res.Body.Close()
		took = append(took, (<-seen).Sub(start))
		<-events // done
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
}
