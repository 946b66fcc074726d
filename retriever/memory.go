package retriever

// This file holds the bound on the process's memory while a run is first
// indexed (issue 18): a Go memory limit derived from the run's size, and the
// heap's free pages given back to the kernel once the first indexing ends.
//
// Without them the Go runtime lets the heap grow to twice what is live
// before it collects (GOGC=100), and keeps what it freed: on the generated
// 1 GB run the live heap after indexing is some 0.6x the run but the process
// holds 1.4x; on 100,000 small files (200 MB) 1.35x live and 4.7x held. The
// limit makes the collector run before the heap passes it, and the release
// returns the headroom. The limit is soft: when the live heap itself is
// above it the collector takes at most about half the CPU and the heap
// grows past it, so a too-low bound costs indexing speed, never a failure.
// It is the process's setting, so only a program that holds one index sets
// it (Options.BoundMemory: runls' commands), and never over a GOMEMLIMIT
// the user gave.

import (
	"math"
	"os"
	"runtime/debug"
)

const (
	// memoryLimitBase and memoryLimitPerRunByte make the limit: the
	// heap's fixed part (dictionary, buffers, the runtime) and what the
	// index keeps per byte of the run (its segments, record tables and
	// per-file state: 0.6x at 1 GB in few files, more in many small ones).
	memoryLimitBase       = 384 << 20
	memoryLimitPerRunByte = 0.75
)

// memoryLimitFor is the Go memory limit for indexing a run of runBytes.
func memoryLimitFor(runBytes int64) int64 {
	return memoryLimitBase + int64(float64(runBytes)*memoryLimitPerRunByte)
}

// boundMemory sets the process's memory limit for the first indexing of a
// run of runBytes, unless the user set one (GOMEMLIMIT) or a lower one is
// set.
func boundMemory(runBytes int64) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := memoryLimitFor(runBytes)
	if cur := debug.SetMemoryLimit(-1); cur != math.MaxInt64 && cur <= limit {
		return
	}
	debug.SetMemoryLimit(limit)
}

// releaseMemory gives the heap's free pages back to the kernel, after the
// first indexing (a collection, then the scavenger's pass).
func releaseMemory() { debug.FreeOSMemory() }
