//go:build runls_holdindex

package retriever

// This file holds the first index part-built for the end-to-end tests of
// the real binary (cmd/runls): with RUNLS_HOLD_INDEX=path, one worker reads
// the run, each folder's files are a batch of their own, the first batch
// (the newest episode's first folder) is committed, and every
// later one waits until a file exists at path, or the update is cancelled.
// No other build has it.

import (
	"context"
	"os"
	"sync/atomic"
	"time"
)

func init() {
	path := os.Getenv("RUNLS_HOLD_INDEX")
	if path == "" {
		return
	}
	holdInject = func(ix *Index) {
		// One worker, so that the batch committed is the first read job's: the
		// newest episode's first folder (readJobs), the same in every run.
		ix.workers, ix.batchInput = 1, 1
		var batches atomic.Int64
		ix.first.hold = func(ctx context.Context) {
			if batches.Add(1) == 1 {
				return
			}
			for ctx.Err() == nil {
				if _, err := os.Stat(path); err == nil {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
}
