//go:build runls_killpoints && unix

package retriever

// This file holds the kill points of the runls_killpoints build, for the
// end-to-end tests of the real binary (cmd/runls): with
// RUNLS_KILL_AT=point, the process kills itself with SIGKILL (a kill -9,
// no deferred work) the first time it reaches that point:
//
//	merge-flushed  a merge's output is flushed to the entry, not swapped in
//	merge-swapped  a merge's output is swapped in and its sources' blobs
//	               dropped, before the entry's next commit
//
// No other build has it.

import (
	"os"
	"syscall"
)

func init() {
	at := os.Getenv("RUNLS_KILL_AT")
	if at == "" {
		return
	}
	kill := func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }
	killInject = func(ix *Index) {
		switch at {
		case "merge-flushed":
			ix.mergeHeld = kill
		case "merge-swapped":
			ix.mergeDone = kill
		}
	}
}
