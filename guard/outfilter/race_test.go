//go:build race

package outfilter

// raceEnabled: the race detector makes sync.Pool drop items at random.
const raceEnabled = true
