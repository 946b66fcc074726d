package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// TestCacheKilledMidMerge: a kill -9 in the middle of a merge leaves an
// entry that the next open uses or drops, never one that answers wrongly.
// The runls_holdindex build indexes the sample run one folder a batch (eleven
// segments, which a command merges before it answers), and the
// runls_killpoints build kills the process at a merge's point: its output
// flushed to the entry but not swapped in (merge-flushed), or swapped in
// with its sources' blobs dropped, before the entry's next commit
// (merge-swapped). The next command answers as runls with no cache, with
// one warning at most, and the one after it says nothing (the entry it
// left is whole).
func TestCacheKilledMidMerge(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the kill points kill with SIGKILL")
	}
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t, "-tags", "runls_holdindex runls_killpoints")
	run := copySample(t)
	release := filepath.Join(t.TempDir(), "release") // exists: no batch waits
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	args := func(extra ...string) []string {
		return append(append([]string{"search"}, extra...), "--top-k", "20", "--episode", "episode-2", "--conversation", "conv-1", run, "deploy", "error")
	}
	_, want, _ := runBin(t, bin, args("--no-cache")...)
	if n := strings.Count(want, "\n"); n < 10 {
		t.Fatalf("the answer with no cache has %d lines, too few to tell a wrong entry:\n%s", n, want)
	}
	for _, point := range []string{"merge-flushed", "merge-swapped"} {
		t.Run(point, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cache")
			cmd := exec.Command(bin, args("--cache-dir", dir)...)
			cmd.Env = append(os.Environ(), "RUNLS_HOLD_INDEX="+release, "RUNLS_KILL_AT="+point)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("not killed at %s (the point was never reached): %v\n%s", point, err, out)
			}
			if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("ended otherwise than by the kill at %s: %v\n%s", point, err, out)
			}
			code, got, errs := runBin(t, bin, args("--cache-dir", dir)...)
			if code != 0 || got != want {
				t.Fatalf("after the kill: exit %d, stderr %q, stdout\n%s\nwant\n%s", code, errs, got, want)
			}
			if warns(errs) > 1 {
				t.Errorf("after the kill, more than one warning:\n%s", errs)
			}
			code, got, errs = runBin(t, bin, args("--cache-dir", dir)...)
			if code != 0 || got != want || warns(errs) > 0 {
				t.Fatalf("the open after: exit %d, stderr %q, stdout\n%s\nwant\n%s", code, errs, got, want)
			}
		})
	}
}
