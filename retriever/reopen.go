package retriever

// This file holds the reopen side of the persisted index (spec §15, issue
// 18): each file of the run classified against the file table of its cache
// entry (internal/persist/filetable.go): unchanged (not read), checked (its time racy: its
// head and the bytes before its read position read, nothing more when they
// are the same), grown (read from the stored offset with the stored parser
// state), or anything else (its old pieces dead, read again from its
// start). `runls cache list RUN` uses it to say what a reopen would read,
// from the file table alone (without mapping the entry's blobs).
//
// One set of rules: the classification is following's own (follow.go,
// §7), which the reopen uses on the restored states (internal/persist/persist.go): plan on
// the state the record keeps, then recheck where plan leaves a read from
// the commit position, with the record's fingerprints standing for the
// bytes the read compares. TestReopenClassification checks that the reopen
// reads what was classified read.
//
// The fingerprints guard as following's checks do (§7): the file's first
// checkBytes and the checkBytes before the read position, as they were when
// read. A file rewritten with the same size, away from both ends, with its
// time set back is, as for following, not seen where the system keeps no
// inode change time.

import (
	"context"
	"io"
	"io/fs"

	"runls/internal/store"
	"runls/retriever/internal/persist"
	"runls/retriever/internal/runfs"
)

// reopenClass is what a reopen does with one file.
type reopenClass int

const (
	reopenUnchanged reopenClass = iota // same identity, size, time and fingerprints: not read
	reopenChecked                      // the same, but its time racy: its fingerprints' bytes read, nothing else
	reopenGrown                        // the same bytes and more after them: read from the stored offset
	reopenReread                       // shrunk, replaced, rewritten, touched or racy: read again whole
	reopenNew                          // not in the table: read whole
	reopenGone                         // in the table, not in the run: its pieces dropped
)

func (c reopenClass) String() string {
	return [...]string{"unchanged", "checked", "grown", "reread", "new", "gone"}[c]
}

// classify decides what a reopen does with the file of rec (parser state
// c), listed now as cand and opened as f (info its stat), by following's
// own rules, as the reopen does (internal/persist/persist.go): plan on the state the record
// keeps, then, for a read from the commit position, recheck with the
// record's fingerprints for the bytes read compares.
func (ix *Index) classify(rec store.FileRecord, c persist.Carry, cand runfs.Candidate, info fs.FileInfo, f io.ReaderAt) reopenClass {
	old := persist.RecordState(rec, c)
	t := ix.plan(old, cand)
	switch {
	case t == nil:
		return reopenUnchanged
	case t.fresh:
		return reopenReread
	}
	rewritten := func() bool {
		return !persist.FingerprintAt(f, 0, rec.Head) || !persist.FingerprintAt(f, rec.IndexedTo-int64(rec.Tail.Len), rec.Tail)
	}
	switch runfs.Recheck(knownOf(old), info, rewritten) {
	case runfs.RecheckFresh:
		return reopenReread
	case runfs.RecheckNothing:
		return reopenChecked
	}
	return reopenGrown
}

// ReopenPlan is what a reopen of a run from its cache entry would read.
type ReopenPlan struct {
	Files     int   // agent files of the run now
	Unchanged int   // not read
	Grown     int   // read from where the entry stopped
	Reread    int   // read again from their start (shrunk, replaced, rewritten, racy)
	New       int   // not in the entry
	Gone      int   // in the entry, no longer in the run
	ReadBytes int64 // bytes the reopen reads
	KeptBytes int64 // bytes it does not read again
}

// PlanReopen classifies the agent files of the run at root against the file
// table of its cache entry (the caller section the index committed), as a
// reopen does (spec §15), reading nothing but each file's fingerprints.
func PlanReopen(ctx context.Context, root string, table []byte) (ReopenPlan, error) {
	records, err := store.DecodeFileTable(table)
	if err != nil {
		return ReopenPlan{}, err
	}
	ix, err := Open(ctx, Options{Root: root})
	if err != nil {
		return ReopenPlan{}, err
	}
	defer ix.Close()
	return ix.planReopen(ctx, records)
}

func (ix *Index) planReopen(ctx context.Context, records []store.FileRecord) (ReopenPlan, error) {
	ix.refreshMu.Lock()
	sc, err := ix.fw.Scan(ix.fsys, ix.root, ix.workers, scanLog{&ix.once})
	ix.refreshMu.Unlock()
	if err != nil {
		return ReopenPlan{}, err
	}
	p := ReopenPlan{Files: sc.Len()}
	inTable := make(map[string]bool, len(records))
	for _, rec := range records {
		if err := ctx.Err(); err != nil {
			return ReopenPlan{}, err
		}
		inTable[rec.Path] = true
		cand, ok := sc.Lookup(rec.Path)
		if !ok {
			p.Gone++
			continue
		}
		class, c, err := ix.classifyAtPath(rec, cand)
		if err != nil {
			return ReopenPlan{}, err
		}
		size := cand.Info.Size
		switch class {
		case reopenUnchanged, reopenChecked:
			p.Unchanged++
			p.KeptBytes += size
		case reopenGrown:
			from := rec.IndexedTo - c.Pending
			p.Grown++
			p.ReadBytes += size - from
			p.KeptBytes += from
		default:
			p.Reread++
			p.ReadBytes += size
		}
	}
	for _, cands := range sc.Folders() {
		for _, cand := range cands {
			if !inTable[cand.Rel] {
				p.New++
				p.ReadBytes += cand.Info.Size
			}
		}
	}
	return p, nil
}

// classifyAtPath opens the file of rec as the index opens it (confined to
// the run, never through a link) and classifies it; it gives the record's
// parser state too.
func (ix *Index) classifyAtPath(rec store.FileRecord, cand runfs.Candidate) (reopenClass, persist.Carry, error) {
	c, err := persist.DecodeCarry(rec.Carry)
	if err != nil {
		return 0, persist.Carry{}, err
	}
	f, err := runfs.OpenFile(ix.fsys, rec.Path)
	if err != nil {
		return reopenReread, c, nil // unreadable now: the reopen reads it (and says why)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || !runfs.AtPath(ix.root, ix.fsys, f, rec.Path, cand.Info, info) {
		return reopenReread, c, nil
	}
	return ix.classify(rec, c, cand, info, f), c, nil
}
