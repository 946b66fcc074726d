//go:build race

package masking

// RaceEnabled: the race detector is on. The tests over every secret sample
// index 6,712 small runs; under the detector they take minutes, so they run
// without it (`make test-go` runs them so).
const RaceEnabled = true
