package retriever

// This file holds the bound on the process's memory while a run is first
// indexed (issue 18): a Go memory limit derived from the run's size and its
// number of files, and the heap's free pages given back to the kernel once
// the first indexing ends.
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
	// memoryLimitBase, memoryLimitPerRunByte and memoryLimitPerFile make
	// the limit: the heap's fixed part (dictionary, the batches being
	// built, the runtime), what the index keeps per byte of the run (its
	// segments and record tables: 0.6x at 1 GB in 800 files) and what it
	// keeps per file whatever its size (its state, listing and statistics:
	// 1.5 KB a file at 100,000 files of 200 MB, whose live heap is 2.9 KB a
	// file), each with a quarter more for the collector's room. Without the
	// per-file part the limit (546 MB there) sat near the live heap of a
	// run of many small files, and the collector ran without end: through
	// runls serve, indexing those 100,000 files took 1.3-1.5x the CPU
	// (issue 13).
	memoryLimitBase       = 384 << 20
	memoryLimitPerRunByte = 0.75
	memoryLimitPerFile    = 2 << 10
)

// memoryLimitFor is the Go memory limit for indexing a run of runBytes in
// files files.
func memoryLimitFor(runBytes, files int64) int64 {
	return memoryLimitBase + int64(float64(runBytes)*memoryLimitPerRunByte) + files*memoryLimitPerFile
}

// boundMemory sets the process's memory limit for the first indexing of a
// run of runBytes in files files, unless the user set one (GOMEMLIMIT) or
// a lower one is set.
func boundMemory(runBytes, files int64) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := memoryLimitFor(runBytes, files)
	if cur := debug.SetMemoryLimit(-1); cur != math.MaxInt64 && cur <= limit {
		return
	}
	debug.SetMemoryLimit(limit)
}

// releaseMemory gives the heap's free pages back to the kernel, after the
// first indexing (a collection, then the scavenger's pass).
func releaseMemory() { debug.FreeOSMemory() }
