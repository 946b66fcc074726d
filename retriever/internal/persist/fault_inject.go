//go:build runls_faultinject

package persist

// This file holds the fault injection of the runls_faultinject build, for
// the end-to-end tests of the real binary (cmd/runls): with
// RUNLS_FAULT_AT=point (update, answer, merge or write), the first time
// that point is reached after the cache guard's check, the restored blobs'
// files are cut to nothing, so that the read which follows faults on the
// mapping. No other build has it.

import (
	"os"
	"sync"
)

func init() {
	at := os.Getenv("RUNLS_FAULT_AT")
	if at == "" {
		return
	}
	injectFaults = func(g *mappingGuard) {
		var once sync.Once
		g.afterCheck = func(point string) {
			if point == at {
				once.Do(func() { g.cutFiles() })
			}
		}
	}
}
