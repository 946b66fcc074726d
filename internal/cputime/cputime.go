// Package cputime says how much CPU time the process has used, for the
// benchmarks that report it beside the wall clock: on a shared, loaded
// machine it measures the work a benchmark does better than the wall
// clock does.
package cputime

import "time"

// Process returns the process's user and system time so far, or 0 where
// the system does not say (or the call fails).
func Process() time.Duration { return process() }
