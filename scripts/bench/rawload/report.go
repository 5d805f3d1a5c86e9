package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"time"
)

// stats summarizes one round's latencies in microseconds.
type stats struct {
	P50, P90, P99, Max float64
	CallsPerSec        float64
	// CPUus is the server's CPU time per call (stdio targets; 0 unknown).
	CPUus float64
}

func summarize(lat []time.Duration, elapsed time.Duration) stats {
	sorted := slices.Clone(lat)
	slices.Sort(sorted)
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	return stats{
		P50: us(percentile(sorted, 50)), P90: us(percentile(sorted, 90)),
		P99: us(percentile(sorted, 99)), Max: us(sorted[len(sorted)-1]),
		CallsPerSec: float64(len(sorted)) / elapsed.Seconds(),
	}
}

// percentile is the nearest-rank p-th percentile of sorted values.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[max(rank, 1)-1]
}

// median of the values (the mean of the middle two for an even count).
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// printRound prints the round's figures per target and, from the second
// target on, its ratios to the first target's same round.
func printRound(w io.Writer, cfg config, r int, rounds [][]stats) {
	if cfg.jsonOut {
		return
	}
	base := rounds[0][r-1]
	for i, t := range cfg.targets {
		st := rounds[i][r-1]
		fmt.Fprintf(w, "round %d  %-12s p50 %8.1f µs  p90 %8.1f  p99 %8.1f  max %9.1f  %8.0f calls/s  cpu %s µs/call",
			r, t.name, st.P50, st.P90, st.P99, st.Max, st.CallsPerSec, known(st.CPUus, "%6.1f"))
		if i > 0 {
			fmt.Fprintf(w, "  p50 %.2fx p99 %.2fx calls/s %.2fx cpu %sx", st.P50/base.P50, st.P99/base.P99,
				st.CallsPerSec/base.CallsPerSec, known(ratio(st.CPUus, base.CPUus), "%.2f"))
		}
		fmt.Fprintln(w)
	}
}

// summary is one target's medians over the rounds, with the medians of its
// per-round ratios to the first target.
type summary struct {
	Target       string  `json:"target"`
	Rounds       int     `json:"rounds"`
	N            int     `json:"n_per_round"`
	Concurrency  int     `json:"concurrency"`
	P50us        float64 `json:"p50_us"`
	P99us        float64 `json:"p99_us"`
	CallsPerSec  float64 `json:"calls_per_sec"`
	P50Ratio     float64 `json:"p50_ratio_to_first"`
	P99Ratio     float64 `json:"p99_ratio_to_first"`
	CallsPerSecR float64 `json:"calls_per_sec_ratio_to_first"`
	CPUus        float64 `json:"server_cpu_us_per_call"`
	CPURatio     float64 `json:"server_cpu_ratio_to_first"`
}

func summaries(cfg config, rounds [][]stats) []summary {
	out := make([]summary, len(rounds))
	for i, rs := range rounds {
		var p50, p99, cps, cpu, r50, r99, rcps, rcpu []float64
		for r, st := range rs {
			base := rounds[0][r]
			p50, p99, cps, cpu = append(p50, st.P50), append(p99, st.P99), append(cps, st.CallsPerSec), append(cpu, st.CPUus)
			r50, r99, rcps = append(r50, st.P50/base.P50), append(r99, st.P99/base.P99), append(rcps, st.CallsPerSec/base.CallsPerSec)
			rcpu = append(rcpu, ratio(st.CPUus, base.CPUus))
		}
		out[i] = summary{
			Target: cfg.targets[i].name, Rounds: len(rs), N: cfg.n, Concurrency: cfg.concurrency,
			P50us: round1(median(p50)), P99us: round1(median(p99)), CallsPerSec: round1(median(cps)),
			P50Ratio: round2(median(r50)), P99Ratio: round2(median(r99)), CallsPerSecR: round2(median(rcps)),
			CPUus: round1(median(cpu)), CPURatio: round2(median(rcpu)),
		}
	}
	return out
}

func printSummary(w io.Writer, cfg config, rounds [][]stats) {
	sums := summaries(cfg, rounds)
	if cfg.jsonOut {
		enc := json.NewEncoder(w)
		for _, s := range sums {
			_ = enc.Encode(s)
		}
		return
	}
	fmt.Fprintf(w, "\nmedians of %d rounds (%d calls each, concurrency %d, protocol %s); ratios are medians of per-round ratios to %s\n",
		cfg.rounds, cfg.n, cfg.concurrency, cfg.protocol, cfg.targets[0].name)
	for _, s := range sums {
		fmt.Fprintf(w, "%-12s p50 %8.1f µs  p99 %8.1f µs  %8.0f calls/s  cpu %s µs/call  p50 %.2fx  p99 %.2fx  calls/s %.2fx  cpu %sx\n",
			s.Target, s.P50us, s.P99us, s.CallsPerSec, known(s.CPUus, "%6.1f"), s.P50Ratio, s.P99Ratio, s.CallsPerSecR, known(s.CPURatio, "%.2f"))
	}
	for _, r := range pairRatios(cfg, rounds) {
		fmt.Fprintf(w, "%-25s p50 %.2fx (rounds %.2f-%.2f)  p99 %.2fx\n", r.Name, r.P50Ratio, r.P50Min, r.P50Max, r.P99Ratio)
	}
}

// pairRatio is the medians of one --ratio pair's per-round ratios, with
// the spread of the p50 ratio over the rounds.
type pairRatio struct {
	Name                     string
	P50Ratio, P50Min, P50Max float64
	P99Ratio                 float64
}

func pairRatios(cfg config, rounds [][]stats) []pairRatio {
	var out []pairRatio
	for _, p := range cfg.ratios {
		var r50, r99 []float64
		for r, st := range rounds[p.num] {
			den := rounds[p.den][r]
			r50, r99 = append(r50, st.P50/den.P50), append(r99, st.P99/den.P99)
		}
		out = append(out, pairRatio{
			Name:     cfg.targets[p.num].name + "/" + cfg.targets[p.den].name,
			P50Ratio: round2(median(r50)), P50Min: round2(slices.Min(r50)), P50Max: round2(slices.Max(r50)),
			P99Ratio: round2(median(r99)),
		})
	}
	return out
}

// known formats v, or "-" when it is 0 (unknown: an HTTP server's CPU
// time is not rawload's to read).
func known(v float64, format string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

// ratio is a/b, or 0 when b is unknown.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }
func round2(v float64) float64 { return math.Round(v*100) / 100 }
