//go:build !race

package masking

// RaceEnabled: the race detector is on (see race_test.go).
const RaceEnabled = false
