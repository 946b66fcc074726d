//go:build race

package lsp_test

// raceEnabled: the race detector is on, and counts allocations of its own.
const raceEnabled = true
