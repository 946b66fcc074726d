package retriever

// This file holds the reopen side of the persisted index (spec §15, issue
// 18): each file of the run classified against the file table of its cache
// entry (filetable.go): unchanged (not read), grown (read from the stored
// offset with the stored parser state), or anything else (its old pieces
// dead, read again from its start). `runls cache list RUN` uses it to say
// what a reopen would read, from the file table alone (without mapping the
// entry's blobs); the reopen itself restores the files' states and lets
// following's plan decide (persist.go). The two must agree:
// TestReopenClassification checks the cases of both.
//
// The fingerprints guard as following's checks do (§7): the file's first
// checkBytes and the checkBytes before the read position, as they were when
// read. A file whose time was within racyWindow of that read could have
// changed again within the same clock tick, where only its content can
// tell: it is read again, never taken as unchanged. A file rewritten with
// the same size, away from both ends, and its time set back is, as for
// following, not seen.

import (
	"context"
	"errors"
	"io"
	"io/fs"

	"runls/internal/store"
)

// reopenClass is what a reopen does with one file.
type reopenClass int

const (
	reopenUnchanged reopenClass = iota // same identity, size, time and fingerprints: not read
	reopenGrown                        // the same bytes and more after them: read from the stored offset
	reopenReread                       // shrunk, replaced, rewritten, touched or racy: read again whole
	reopenNew                          // not in the table: read whole
	reopenGone                         // in the table, not in the run: its pieces dropped
)

func (c reopenClass) String() string {
	return [...]string{"unchanged", "grown", "reread", "new", "gone"}[c]
}

// classify decides what a reopen does with the file of rec, now info (its
// stat) and f (opened, for its fingerprints; read only when identity, size
// and time leave it possibly unchanged or grown).
func classify(rec store.FileRecord, c carry, info fs.FileInfo, f io.ReaderAt) reopenClass {
	dev, ino := fileID(info)
	size, mtime := info.Size(), info.ModTime().UnixNano()
	switch {
	case dev != rec.Dev || ino != rec.Ino: // replaced by another file
		return reopenReread
	case size < rec.IndexedTo: // shrunk
		return reopenReread
	case c.binary:
		// Left out by its head: the same file only when nothing moved.
		if size == rec.Size && mtime == rec.ModTime && !racy(mtime, c.readAt) {
			return reopenUnchanged
		}
		return reopenReread
	case size == rec.Size && mtime != rec.ModTime && size == rec.IndexedTo,
		size == rec.Size && mtime == rec.ModTime && size == rec.IndexedTo && fileCtime(info) != c.ctime:
		// The same size with a new time (rewritten in place, or touched),
		// or with its time set back but the inode changed since: following
		// does the same (§7).
		return reopenReread
	case racy(rec.ModTime, c.readAt):
		// It may have changed after the read without its time moving.
		return reopenReread
	}
	if !fingerprintAt(f, 0, rec.Head) || !fingerprintAt(f, rec.IndexedTo-int64(rec.Tail.Len), rec.Tail) {
		return reopenReread
	}
	if size == rec.Size && mtime == rec.ModTime && size == rec.IndexedTo {
		return reopenUnchanged
	}
	return reopenGrown
}

// fingerprintAt reports whether the bytes of f at off have fingerprint want.
func fingerprintAt(f io.ReaderAt, off int64, want store.Fingerprint) bool {
	if want.Len == 0 {
		return true
	}
	buf := make([]byte, want.Len)
	n, err := f.ReadAt(buf, off)
	if n != len(buf) || err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	return store.FingerprintOf(buf) == want
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
	sc, err := ix.discover()
	ix.refreshMu.Unlock()
	if err != nil {
		return ReopenPlan{}, err
	}
	p := ReopenPlan{Files: len(sc.found)}
	inTable := make(map[string]bool, len(records))
	for _, rec := range records {
		if err := ctx.Err(); err != nil {
			return ReopenPlan{}, err
		}
		inTable[rec.Path] = true
		cand, ok := sc.found[rec.Path]
		if !ok {
			p.Gone++
			continue
		}
		class, c, err := ix.classifyAtPath(rec, cand)
		if err != nil {
			return ReopenPlan{}, err
		}
		size := cand.info.Size()
		switch class {
		case reopenUnchanged:
			p.Unchanged++
			p.KeptBytes += size
		case reopenGrown:
			from := rec.IndexedTo - c.pending
			p.Grown++
			p.ReadBytes += size - from
			p.KeptBytes += from
		default:
			p.Reread++
			p.ReadBytes += size
		}
	}
	for rel, cand := range sc.found {
		if !inTable[rel] {
			p.New++
			p.ReadBytes += cand.info.Size()
		}
	}
	return p, nil
}

// classifyAtPath opens the file of rec as the index opens it (confined to
// the run, never through a link) and classifies it; it gives the record's
// parser state too.
func (ix *Index) classifyAtPath(rec store.FileRecord, cand candidate) (reopenClass, carry, error) {
	c, err := decodeCarry(rec.Carry)
	if err != nil {
		return 0, carry{}, err
	}
	f, err := openFile(ix.fsys, rec.Path)
	if err != nil {
		return reopenReread, c, nil // unreadable now: the reopen reads it (and says why)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || !ix.atPath(f, rec.Path, cand.info, info) {
		return reopenReread, c, nil
	}
	return classify(rec, c, info, f), c, nil
}
