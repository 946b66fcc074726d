package retriever

// This file holds what a command's open does to answer a reopen sooner
// (Options.OneShot): the walk begun beside the cache entry's restore, and
// a collector that runs less often while the restored index answers.
//
// On a reopen of 100,000 files the restore (the entry's manifest, file
// table and file states, one core) and the walk (a stat of every file, a
// listing of every folder, two cores) each took a good part of `runls
// search`'s time, one after the other. Neither reads what the other
// writes: the walk is discovery's (runfs.Discovery), the restore the
// index's state.

import (
	"os"
	"runtime/debug"

	"runls/retriever/internal/runfs"
)

// collectNone turns the collector off for a command's open, unless the
// user set GOGC, and returns what turns it back on. What a reopen
// allocates until its first update has planned its reads (the restored
// file states, some 40 MB at 100,000 files, and the walk's listings, some
// 30 MB) is kept until then, so a collection before finds little to free
// but marks it all: at the default GOGC five collections took some 0.1 s
// of CPU, a sixth of `runls search`'s; at 400 two still took some 50 ms.
// The first update turns it back on before it reads any file (collectOn);
// one that reads none leaves it off for the command's answer, whose heap
// the memory limit bounds (internal/persist/memory.go), as it bounds a
// first indexing's.
func collectNone() (on func()) {
	if os.Getenv("GOGC") != "" {
		return nil
	}
	old := debug.SetGCPercent(-1)
	return func() { debug.SetGCPercent(old) }
}

// collectOn is the first update's, once its reads are planned: the
// collector goes back on when it reads or drops files.
func (ix *Index) collectOn(reads bool) {
	if ix.collectBack == nil {
		return
	}
	if reads {
		ix.collectBack()
	}
	ix.collectBack = nil
}

// openedScan is the walk begun at Open, once done.
type openedScan struct {
	sc  *runfs.Scan
	err error
}

// scanAtOpen begins the walk; its goroutine holds refreshMu until the walk
// is done, so that the first update (or a fault's drop of the entry, or
// Close) waits for it.
func (ix *Index) scanAtOpen() {
	ix.refreshMu.Lock()
	go func() {
		defer ix.refreshMu.Unlock()
		sc, err := ix.fw.Scan(ix.fsys, ix.root, ix.workers, scanLog{&ix.once})
		ix.opened = &openedScan{sc, err}
	}()
}

// scan is an update's discovery: the walk begun at Open when there is one
// not yet taken, else a scan now. The caller holds refreshMu.
func (ix *Index) scan() (*runfs.Scan, error) {
	if o := ix.opened; o != nil {
		ix.opened = nil
		return o.sc, o.err
	}
	return ix.fw.Scan(ix.fsys, ix.root, ix.workers, scanLog{&ix.once})
}
