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
