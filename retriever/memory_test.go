package retriever

import (
	"math"
	"runtime/debug"
	"testing"
)

// The bound is set from the run's size, never raises a lower limit, and
// never overrides the user's GOMEMLIMIT.
func TestBoundMemory(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })

	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "")
	boundMemory(1<<30, 0)
	if got, want := debug.SetMemoryLimit(-1), memoryLimitFor(1<<30, 0); got != want {
		t.Errorf("limit %d, want %d", got, want)
	}
	boundMemory(10<<30, 0) // a higher bound does not replace a lower one
	if got, want := debug.SetMemoryLimit(-1), memoryLimitFor(1<<30, 0); got != want {
		t.Errorf("after a larger run: limit %d, want %d", got, want)
	}

	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "8GiB")
	boundMemory(1<<30, 0)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set: limit %d, want none", got)
	}
}

// A run of many small files keeps a state per file whatever its bytes: the
// limit gives each its share, so that it is not set at the live heap of
// such a run (where the collector would run without end).
func TestMemoryLimitCountsFiles(t *testing.T) {
	const runBytes = 200 << 20
	few, many := memoryLimitFor(runBytes, 800), memoryLimitFor(runBytes, 100_000)
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
