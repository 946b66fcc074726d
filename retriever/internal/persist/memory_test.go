package persist

import (
	"math"
	"runtime/debug"
	"testing"

	"runls/retriever/internal/corpus"
)

// The bound is set from the run's size, never raises a lower limit, and
// never overrides the user's GOMEMLIMIT.
func TestBoundMemory(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })

	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "")
	BoundMemory(MemoryUse{RunBytes: 1 << 30})
	if got, want := debug.SetMemoryLimit(-1), (MemoryUse{RunBytes: 1 << 30}).Limit(); got != want {
		t.Errorf("limit %d, want %d", got, want)
	}
	BoundMemory(MemoryUse{RunBytes: 10 << 30}) // a higher bound does not replace a lower one
	if got, want := debug.SetMemoryLimit(-1), (MemoryUse{RunBytes: 1 << 30}).Limit(); got != want {
		t.Errorf("after a larger run: limit %d, want %d", got, want)
	}

	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "8GiB")
	BoundMemory(MemoryUse{RunBytes: 1 << 30})
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set: limit %d, want none", got)
	}
}

// A run of many small files keeps a state per file whatever its bytes: the
// limit gives each its share, so that it is not set at the live heap of
// such a run (where the collector would run without end).
func TestMemoryLimitCountsFiles(t *testing.T) {
	const runBytes = 200 << 20
	few, many := MemoryUse{RunBytes: runBytes, Files: 800}.Limit(), MemoryUse{RunBytes: runBytes, Files: 100_000}.Limit()
	if got, want := many-few, int64(100_000-800)*memoryLimitPerFile; got != want {
		t.Errorf("100,000 files over 800: %d more, want %d", got, want)
	}
	// The live heap of the generated 100,000-file run of 200 MB was 2.9 KB a
	// file. Above it the limit must leave the room a run of few files gets
	// (whose live heap, 0.6x the run, is below the per-byte part): the base,
	// for the batches being built.
	if live := int64(100_000 * 2900); many-live < memoryLimitBase {
		t.Errorf("limit %d MB for 100,000 files of 200 MB: %d MB above their live heap, want at least %d", many>>20, (many-live)>>20, memoryLimitBase>>20)
	}
}

// With the segments flushed as they are made the limit is what stays on
// the heap: the batches being built and a part of the run far below the
// segments' (0.42x at 1 GB), so that the collector keeps RssAnon near
// half the run, not the 1.1x the heap-only limit lets it reach; and never
// below the live heap the first indexing measured (0.33x at 1 GB, with
// 28 MiB batches).
func TestMemoryLimitFlushed(t *testing.T) {
	const gb = 1 << 30
	u := MemoryUse{RunBytes: gb, Files: 800, Flushed: true, Batches: 2 * (gb / corpus.MaxBatchShare)}
	heap := MemoryUse{RunBytes: gb, Files: 800}
	if got := float64(u.Limit()) / gb; got > 0.46 || got < 0.33+0.08 {
		t.Errorf("flushed limit at 1 GB: %.2fx the run, want room above 0.33x and at most 0.46x", got)
	}
	if u.Limit() >= heap.Limit() {
		t.Errorf("flushed limit %d not below the heap-only one %d", u.Limit(), heap.Limit())
	}
}

// With the segments flushed, the limit of the generated 100,000 files of
// 206 MB (issue 33's run) sits at about the run's size, RssAnon's bound
// there (the process's RssAnon stays a little under the limit), and above
// the live peak its first index measured (some 170 MB with 8 MiB batches
// sorted in one pass: BenchmarkFirstIndexMemory's peak-live, the server's
// heap profiles), with room for the collector. At 5 KiB a file it was 700
// MB, and the peak RssAnon 2.2-2.7x the run.
func TestMemoryLimitFlushedManyFiles(t *testing.T) {
	const runBytes, files, workers = 206_000_000, 100_000, 2
	batch := corpus.BatchBytesFor(runBytes, 0)
	u := MemoryUse{RunBytes: runBytes, Files: files, Flushed: true, Batches: workers * batch, SortExtra: SortExtra(workers, batch)}
	if got := float64(u.Limit()) / runBytes; got > 1.07 || got < 0.95 {
		t.Errorf("flushed limit at 100,000 files of 206 MB: %.2fx the run, want 0.95-1.07x", got)
	}
	if livePeak := int64(170_000_000); u.Limit()-livePeak < 24<<20 {
		t.Errorf("flushed limit %d MB leaves %d MB above the live peak", u.Limit()>>20, (u.Limit()-livePeak)>>20)
	}
}

// A write lifts the first indexing's limit by its room and puts it back;
// it leaves alone the user's GOMEMLIMIT, no limit, and a limit changed
// while it wrote.
func TestLiftMemory(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	t.Setenv("GOMEMLIMIT", "")

	const bound = 200 << 20
	debug.SetMemoryLimit(bound)
	restore := liftMemory(100_000)
	if got, want := debug.SetMemoryLimit(-1), int64(bound+writeRoomBase+100_000*writeRoomPerFile); got != want {
		t.Errorf("while writing: limit %d, want %d", got, want)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != bound {
		t.Errorf("after the write: limit %d, want %d", got, bound)
	}

	restore = liftMemory(10)
	debug.SetMemoryLimit(300 << 20) // changed meanwhile
	restore()
	if got := debug.SetMemoryLimit(-1); got != 300<<20 {
		t.Errorf("a limit changed during the write: %d after it, want it kept", got)
	}

	debug.SetMemoryLimit(math.MaxInt64)
	liftMemory(100_000)()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("no limit: %d after a write", got)
	}
	debug.SetMemoryLimit(bound)
	t.Setenv("GOMEMLIMIT", "8GiB")
	restore = liftMemory(100_000)
	if got := debug.SetMemoryLimit(-1); got != bound {
		t.Errorf("with GOMEMLIMIT set: %d while writing, want %d", got, bound)
	}
	restore()
}
