package main

import (
	"slices"
	"testing"
)

// Over n rounds each target runs once in each place of a round, and every
// round calls each target once.
func TestRoundOrderRotates(t *testing.T) {
	for n := 1; n <= 4; n++ {
		places := make([]map[int]bool, n)
		for k := range places {
			places[k] = map[int]bool{}
		}
		for r := range n {
			order := roundOrder(n, r)
			sorted := slices.Sorted(slices.Values(order))
			for k := range n {
				if sorted[k] != k {
					t.Fatalf("n=%d round %d: order %v does not call each target once", n, r, order)
				}
				places[k][order[k]] = true
			}
		}
		for k, seen := range places {
			if len(seen) != n {
				t.Errorf("n=%d: place %d held only targets %v over %d rounds", n, k, seen, n)
			}
		}
	}
}

// A --ratio pair is the median of its per-round ratios, not the ratio of
// the medians, with the rounds' spread; an unknown name is refused.
func TestPairRatios(t *testing.T) {
	targets := []targetSpec{{name: "direct"}, {name: "relay"}, {name: "guarded"}}
	specs, err := ratioFlags{{"guarded", "relay"}, {"relay", "direct"}}.resolve(targets)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config{targets: targets, ratios: specs}
	rounds := [][]stats{
		{{P50: 100, P99: 200}, {P50: 100, P99: 200}, {P50: 200, P99: 400}},
		{{P50: 150, P99: 300}, {P50: 120, P99: 300}, {P50: 200, P99: 600}},
		{{P50: 300, P99: 600}, {P50: 180, P99: 300}, {P50: 250, P99: 600}},
	}
	got := pairRatios(cfg, rounds)
	want := []pairRatio{
		{Name: "guarded/relay", P50Ratio: 1.5, P50Min: 1.25, P50Max: 2, P99Ratio: 1},
		{Name: "relay/direct", P50Ratio: 1.2, P50Min: 1, P50Max: 1.5, P99Ratio: 1.5},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pairRatios = %+v, want %+v", got, want)
	}
	if _, err := (ratioFlags{{"guarded", "nope"}}).resolve(targets); err == nil {
		t.Fatal("an unknown target was taken")
	}
}
