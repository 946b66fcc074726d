package persist

// This file holds the bound on the process's memory while a run is first
// indexed (issue 18): a Go memory limit derived from the run's size, its
// number of files and whether its segments are flushed as they are made,
// and the heap's free pages given back to the kernel once the first
// indexing ends.
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

	"runls/retriever/internal/bm25"
	"runls/retriever/internal/corpus"
)

const (
	// memoryLimitBase, memoryLimitPerRunByte and memoryLimitPerFile make
	// the limit when the segments stay on the heap (no cache entry this
	// process writes: flush.go): the heap's fixed part (dictionary, the
	// batches being built, the runtime), what the index keeps per byte of
	// the run (its segments and record tables: 0.6x at 1 GB in 800 files)
	// and what it keeps per file whatever its size (its state, listing and
	// statistics: 1.5 KB a file at 100,000 files of 200 MB, whose live heap
	// is 2.9 KB a file), each with a quarter more for the collector's room.
	// Without the per-file part the limit (546 MB there) sat near the live
	// heap of a run of many small files, and the collector ran without end:
	// through runls serve, indexing those 100,000 files took 1.3-1.5x the
	// CPU (issue 13).
	memoryLimitBase       = 384 << 20
	memoryLimitPerRunByte = 0.75
	memoryLimitPerFile    = 2 << 10

	// With the segments flushed as they are made, the heap holds the
	// batches being built and what the index keeps beside its segments, so
	// the limit is made of those (BenchmarkFirstIndexMemory with
	// RUNLS_BENCH_FLUSH=1, generated 1 GB run: a live peak of 0.33x, of
	// which the two workers' batches 0.17x and the rest 0.13x at the end):
	// flushedLimitBase for the runtime, read buffers and goroutines;
	// flushedLimitPerBatchByte for each worker's batch (its builder's
	// postings log and sort buffer, some 1.8 bytes a byte read, then the
	// segment laid out and its blob's encoding before its heap copy is
	// dropped); flushedLimitPerRunByte for the files' states (line index,
	// record table), dictionary and statistics (0.13x at 1 GB) with room;
	// flushedLimitPerFile for what a file keeps whatever its size (its
	// state, its task until it is read, its listing: some 0.45 KB), the
	// collector's room being in the base. At 1 GB in 800 files: 64 MiB + 2 x
	// 28 MiB x 3 + 0.2 GiB = 0.43x the run, where the live peak is
	// 0.31-0.33x. At 100,000 files of 206 MB: 64 MiB + 2 x 8 MiB x 3 + 39 MiB
	// + 43 MiB + 9 MiB (one-pass sorts) = 203 MiB, where the live peak is
	// some 170 MB: issue 33's bound, the peak RssAnon at most 1x the run,
	// holds with some room (through runls serve, A B A B at load 6-9: 0.96-
	// 0.97x at 203 MiB, 1.00-1.01x at 209 MiB, 0.94x at 197 MiB; the
	// indexing's CPU 6.2-6.4 s against 5.8 s without a limit, 6.4-7.0 s at
	// 197 MiB). This per-file part was 5 KiB while the batches, the files'
	// states and the statistics of that run took some 260 MB at their peak:
	// a limit at 2 KiB sat some 80 MB above it and the indexing took 1.7x
	// the CPU; at 5 KiB (700 MB) the collector's GOGC room set the peak,
	// 2.2-2.7x the run.
	flushedLimitBase         = 64 << 20
	flushedLimitPerBatchByte = 3
	flushedLimitPerRunByte   = 0.2
	flushedLimitPerFile      = 448
)

// MemoryUse is what a first indexing holds: the run's bytes and files to
// read, and with flushed the bytes its workers read into their batches
// (workers x batchBytesFor), whose segments are flushed as they are made.
type MemoryUse struct {
	RunBytes, Files int64
	Flushed         bool
	Batches         int64
	// sortExtra is what the workers' sort buffers take beyond a quarter
	// of their postings logs: the smallest batches are sorted in one pass
	// (onePass).
	SortExtra int64
}

// SortExtra is what workers one-pass sorts of batches of batchBytes take
// beyond their quarter-log buffers, if their batches are sorted so.
func SortExtra(workers int, batchBytes int64) int64 {
	if !corpus.OnePass(batchBytes) {
		return 0
	}
	return int64(workers) * bm25.SortBufferExtra(batchBytes)
}

// Limit is the Go memory limit for indexing a run of u.RunBytes in u.Files
// files.
func (u MemoryUse) Limit() int64 {
	if u.Flushed {
		return flushedLimitBase + u.Batches*flushedLimitPerBatchByte + int64(float64(u.RunBytes)*flushedLimitPerRunByte) + u.Files*flushedLimitPerFile + u.SortExtra
	}
	return memoryLimitBase + int64(float64(u.RunBytes)*memoryLimitPerRunByte) + u.Files*memoryLimitPerFile + u.SortExtra
}

// BoundMemory sets the process's memory limit for the first indexing u
// describes, unless the user set one (GOMEMLIMIT) or a lower one is set.
func BoundMemory(u MemoryUse) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := u.Limit()
	if cur := debug.SetMemoryLimit(-1); cur != math.MaxInt64 && cur <= limit {
		return
	}
	debug.SetMemoryLimit(limit)
}

// writeRoomPerFile and writeRoomBase are what a write of the entry holds
// beside the index while it encodes (writer.go's commit): the state blob
// and its columns (some 1.1 KB a file on the generated 100,000 files,
// whose live heap went from some 100 MB to 213 MB during a write), the
// dictionary's and statistics' encodings.
const (
	writeRoomPerFile = 1 << 10
	writeRoomBase    = 64 << 20
)

// liftMemory raises the limit BoundMemory set by what a write of the entry
// of an index of files files holds, and returns what puts it back. Under
// the first indexing's limit at 100,000 files (1x the run) the write that
// follows the indexing held more than the limit leaves the heap: the
// collector ran without end, 3-9 s of CPU for the write and the one at
// shutdown. A limit the user set (GOMEMLIMIT), or none, is left alone, and
// so is one changed while the write went on.
func liftMemory(files int) (restore func()) {
	cur := debug.SetMemoryLimit(-1)
	if os.Getenv("GOMEMLIMIT") != "" || cur == math.MaxInt64 {
		return func() {}
	}
	lifted := cur + writeRoomBase + int64(files)*writeRoomPerFile
	debug.SetMemoryLimit(lifted)
	return func() {
		if debug.SetMemoryLimit(-1) == lifted {
			debug.SetMemoryLimit(cur)
		}
	}
}

// ReleaseMemory gives the heap's free pages back to the kernel, after the
// first indexing (a collection, then the scavenger's pass).
func ReleaseMemory() { debug.FreeOSMemory() }
