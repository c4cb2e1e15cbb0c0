//go:build !race

package search

// raceEnabled: the race detector slows the differential test ~10x, so it compares fewer trees.
const raceEnabled = false
