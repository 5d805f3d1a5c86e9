package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/mcpserver"
)

// serverGCPercent is the collector's target a serving binary sets when
// GOGC is not (docs/benchmarks.md, "Garbage collection").
const serverGCPercent = mcpserver.ServerGCPercent

// TestServeGCPercent: a serving binary runs at serverGCPercent when GOGC
// is not set, and at the operator's GOGC when it is, as /metrics shows.
func TestServeGCPercent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		gogc string // "" = not set
		want float64
	}{{"", serverGCPercent}, {"150", 150}} {
		t.Run("GOGC="+tc.gogc, func(t *testing.T) {
			ws, env := workspace(t)
			env = withoutGOGC(env)
			if tc.gogc != "" {
				env = append(env, "GOGC="+tc.gogc)
			}
			addr := freeAddr(t)
			startHTTP(t, ws, append(env, "TOOLWARDEN_METRICS_ADDR="+addr))
			fams := scrapeMetrics(t, addr)
			require.Contains(t, fams, "go_gc_gogc_percent")
			require.Equal(t, tc.want, fams["go_gc_gogc_percent"].GetMetric()[0].GetGauge().GetValue())
		})
	}
}

func withoutGOGC(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GOGC=") {
			out = append(out, kv)
		}
	}
	return out
}
