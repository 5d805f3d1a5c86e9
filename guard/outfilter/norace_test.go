//go:build !race

package outfilter

const raceEnabled = false
