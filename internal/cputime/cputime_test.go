package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestProcessGrows: CPU time spent shows in Process (where it is read).
func TestProcessGrows(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("no getrusage here: Process is 0")
	}
	before := Process()
	deadline := time.Now().Add(50 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	if got := Process() - before; got <= 0 {
		t.Errorf("Process grew by %v over 50 ms of spinning (%d loops)", got, x)
	}
}
