package main

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// report prints per target the median and range of spawn to tools/list,
// the median of its per-round ratios to the first target, and the medians
// of spawn to exit and of the process's CPU time; with calls, the median
// and range of the first call.
func report(w io.Writer, ts targets, got [][]start, calls bool) {
	fmt.Fprintf(w, "\n%-16s %6s %10s %17s %8s %10s %9s %8s\n", "server", "tools", "p50 ms", "min-max ms", "ratio", "exit ms", "cpu ms", "ratio")
	for i, t := range ts {
		list := pick(got[i], func(s start) time.Duration { return s.list })
		cpu := pick(got[i], func(s start) time.Duration { return s.cpu })
		exit := pick(got[i], func(s start) time.Duration { return s.exit })
		var ratios, cpuRatios []float64
		for r := range got[i] {
			ratios = append(ratios, float64(got[i][r].list)/float64(got[0][r].list))
			cpuRatios = append(cpuRatios, float64(got[i][r].cpu)/max(float64(got[0][r].cpu), 1))
		}
		fmt.Fprintf(w, "%-16s %6d %10.1f %8.1f-%-8.1f %7.2fx %10.1f %9.1f %7.2fx\n", t.name, got[i][0].tools,
			median(list), slices.Min(list), slices.Max(list), median(ratios), median(exit), median(cpu), median(cpuRatios))
	}
	if !calls {
		return
	}
	fmt.Fprintf(w, "\n%-16s %14s %17s\n", "server", "first call ms", "min-max ms")
	for i, t := range ts {
		call := pick(got[i], func(s start) time.Duration { return s.call })
		fmt.Fprintf(w, "%-16s %14.2f %8.2f-%-8.2f\n", t.name, median(call), slices.Min(call), slices.Max(call))
	}
}

// pick returns f of each start, in milliseconds.
func pick(ss []start, f func(start) time.Duration) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i] = ms(f(s))
	}
	return out
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
