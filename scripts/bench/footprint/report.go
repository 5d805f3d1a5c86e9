package main

import (
	"fmt"
	"io"
	"slices"
)

func median(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// reportIdle prints, per stdio server, the medians of its rounds.
func reportIdle(w io.Writer, ts named, got [][]idleMemory) {
	if len(ts) == 0 {
		return
	}
	fmt.Fprintln(w, "\n| server | own PSS p50 (min-max) | of it anonymous | processes started | their PSS p50 | total p50 |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for i, t := range ts {
		var own, anon, child, total []int64
		n := 0
		for _, m := range got[i] {
			own = append(own, m.own)
			anon = append(anon, m.ownAnon)
			child = append(child, m.childPSS)
			total = append(total, m.own+m.childPSS)
			n = max(n, m.children)
		}
		fmt.Fprintf(w, "| %s | %.1f MB (%.1f-%.1f) | %.1f MB | %d | %.1f MB | %.1f MB |\n", t.name,
			mb(median(own)), mb(slices.Min(own)), mb(slices.Max(own)), mb(median(anon)), n, mb(median(child)), mb(median(total)))
	}
}

// reportSessions prints, per HTTP server, the median cost of one session.
func reportSessions(w io.Writer, ts named, got [][]sessionCost, n int) {
	if len(ts) == 0 {
		return
	}
	fmt.Fprintf(w, "\n| server | PSS before | PSS after %d sessions | PSS per session p50 (min-max) | RSS per session p50 |\n", n)
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for i, t := range ts {
		var before, after, pss, rss []int64
		for _, c := range got[i] {
			before = append(before, c.before.pss)
			after = append(after, c.after.pss)
			pss = append(pss, (c.after.pss-c.before.pss)*1024/int64(n))
			rss = append(rss, (c.after.rss-c.before.rss)*1024/int64(n))
		}
		fmt.Fprintf(w, "| %s | %.1f MB | %.1f MB | %.1f KB (%.1f-%.1f) | %.1f KB |\n", t.name,
			mb(median(before)), mb(median(after)), kb(median(pss)), kb(slices.Min(pss)), kb(slices.Max(pss)), kb(median(rss)))
	}
}

// kb is bytes as KB (10^3 bytes).
func kb(b int64) float64 { return float64(b) / 1e3 }
