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
	boundMemory(1 << 30)
	if got, want := debug.SetMemoryLimit(-1), memoryLimitFor(1<<30); got != want {
		t.Errorf("limit %d, want %d", got, want)
	}
	boundMemory(10 << 30) // a higher bound does not replace a lower one
	if got, want := debug.SetMemoryLimit(-1), memoryLimitFor(1<<30); got != want {
		t.Errorf("after a larger run: limit %d, want %d", got, want)
	}

	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "8GiB")
	boundMemory(1 << 30)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set: limit %d, want none", got)
	}
}
