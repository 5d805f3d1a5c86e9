package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"
	"time"
)

// stats summarizes the measured latencies in microseconds.
type stats struct {
	p50, p90, p99, max, mean float64
	callsPerSec              float64
}

// jsonReport is the --json output shape.
type jsonReport struct {
	Target      string  `json:"target"`
	Tool        string  `json:"tool"`
	N           int     `json:"n"`
	Concurrency int     `json:"concurrency"`
	P50us       float64 `json:"p50_us"`
	P90us       float64 `json:"p90_us"`
	P99us       float64 `json:"p99_us"`
	MaxUs       float64 `json:"max_us"`
	MeanUs      float64 `json:"mean_us"`
	CallsPerSec float64 `json:"calls_per_sec"`
	Errors      int     `json:"errors"`
}

// summarize computes percentiles (nearest rank), mean and throughput.
func summarize(lat []time.Duration, elapsed time.Duration) stats {
	sorted := slices.Clone(lat)
	slices.Sort(sorted)
	var sum time.Duration
	for _, d := range sorted {
		sum += d
	}
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	st := stats{
		p50:  us(percentile(sorted, 50)),
		p90:  us(percentile(sorted, 90)),
		p99:  us(percentile(sorted, 99)),
		max:  us(sorted[len(sorted)-1]),
		mean: us(sum) / float64(len(sorted)),
	}
	if elapsed > 0 {
		st.callsPerSec = float64(len(sorted)) / elapsed.Seconds()
	}
	return st
}

// percentile returns the nearest-rank p-th percentile of sorted values.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[max(rank, 1)-1]
}

// round1 rounds to one decimal place.
func round1(v float64) float64 { return math.Round(v*10) / 10 }

// report writes the results either as a table or as one JSON object.
func report(w io.Writer, cfg config, st stats, errs int) {
	if cfg.jsonOut {
		enc := json.NewEncoder(w)
		_ = enc.Encode(jsonReport{
			Target: cfg.target(), Tool: cfg.tool, N: cfg.n, Concurrency: cfg.concurrency,
			P50us: round1(st.p50), P90us: round1(st.p90), P99us: round1(st.p99),
			MaxUs: round1(st.max), MeanUs: round1(st.mean),
			CallsPerSec: round1(st.callsPerSec), Errors: errs,
		})
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "target\t%s\n", cfg.target())
	fmt.Fprintf(tw, "tool\t%s\n", cfg.tool)
	fmt.Fprintf(tw, "calls\t%d (concurrency %d, warmup %d)\n", cfg.n, cfg.concurrency, cfg.warmup)
	fmt.Fprintf(tw, "p50\t%.1f µs\n", st.p50)
	fmt.Fprintf(tw, "p90\t%.1f µs\n", st.p90)
	fmt.Fprintf(tw, "p99\t%.1f µs\n", st.p99)
	fmt.Fprintf(tw, "max\t%.1f µs\n", st.max)
	fmt.Fprintf(tw, "mean\t%.1f µs\n", st.mean)
	fmt.Fprintf(tw, "calls/s\t%.1f\n", st.callsPerSec)
	fmt.Fprintf(tw, "errors\t%d\n", errs)
	_ = tw.Flush()
}
