package clusterstate

import (
	"slices"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// BenchmarkAdmitFinish measures what sharing the usage costs one call
// (admit, then count its output), in this process's memory and in Redis
// on loopback, in one run. Besides ns/op it reports the median (p50-ns)
// and p99-ns of single calls.
func BenchmarkAdmitFinish(b *testing.B) {
	l := guard.Limits{MaxCalls: 1 << 30, MaxOutputBytes: 1 << 50, RatePerMinute: 1e9, Burst: 1 << 20, Budget: 1 << 50}
	r := testenv.NeedRedis(b)
	for _, tc := range []struct {
		name  string
		store func() guard.UsageStore
	}{
		{"memory", func() guard.UsageStore { return nil }},
		{"redis", func() guard.UsageStore { return NewUsage(open(b, r), l) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			g := replicaGuard(b, l, tc.store())
			took := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				if err := echo(g, "alice"); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}
