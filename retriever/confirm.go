package retriever

// This file holds the check of a partial answer's files (spec §7, §15, issue
// 33): an answer made before the first update has looked at every file (a
// reopen's answer made from its cache entry's states while the walk runs, or
// one made while a first index is built) confirms each file its pieces are
// of, by following's own rules (plan, then the recheck of the bytes indexed),
// and leaves out the pieces of a file that changed since it was indexed: the
// ranking is made again without them. So a partial answer never carries
// stale evidence; it misses what was added or changed since, which its
// indexing notice says.

import (
	"context"
	"errors"

	"runls/retriever/internal/bm25"
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/runfs"
)

// maxConfirmRounds bounds the rankings of one partial answer: each round
// leaves out at least one file found changed. Past it (many of the best
// files changed) the answer waits for the update instead (errUnconfirmed).
const maxConfirmRounds = 4

// errUnconfirmed is a partial answer whose files kept changing under it:
// the caller answers completely instead.
var errUnconfirmed = errors.New("the files of a partial answer could not be confirmed")

// confirmation is what a partial answer found of its files: confirmed or
// not, by the version of the file's state the ranking read (a version
// committed after it is another pointer, confirmed anew).
type confirmation struct {
	checked map[*corpus.File]bool
}

// confirming returns f set to confirm the files of its hits.
func confirming(f *filter) *filter {
	f.confirm = &confirmation{checked: map[*corpus.File]bool{}}
	f.exclude = map[*corpus.File]bool{}
	return f
}

// searchIndexedConfirmed is searchIndexed for a partial answer: the files
// of its pieces confirmed.
func (ix *Index) searchIndexedConfirmed(ctx context.Context, req Request) (Result, error) {
	return ix.searchFiltered(ctx, req, confirming(newFilter(&ix.state, ix.interpreter, req)))
}

// confirmedHits runs rank, and, when f confirms, checks the files of its
// hits: those changed since they were indexed are excluded from f and the
// ranking is made again. The caller holds the read lock.
func (ix *Index) confirmedHits(f *filter, rank func() ([]hit, error)) ([]hit, error) {
	for round := 0; ; round++ {
		hits, err := rank()
		if err != nil || f.confirm == nil {
			return hits, err
		}
		all := true
		for _, h := range hits {
			ok, seen := f.confirm.checked[h.fs]
			if !seen {
				ok = ix.unchangedSinceIndexed(h.fs)
				f.confirm.checked[h.fs] = ok
			}
			if !ok {
				f.exclude[h.fs] = true
				all = false
			}
		}
		if all {
			return hits, nil
		}
		if round+1 == maxConfirmRounds {
			return nil, errUnconfirmed
		}
	}
}

// unchangedSinceIndexed reports whether the bytes indexed of file fs are
// its bytes now, by following's rules (plan, then the recheck): the same
// file, no shorter than what was read, with its time and inode change time
// the same when its size is, and its head and the bytes before its read
// position the same. A file gone, replaced, shrunk or rewritten is not; one
// that grew is (its pieces are of the bytes before), unless it had a
// pending tail, whose pieces the bytes after it change. It is opened as an
// update opens it: confined to the run, through no link.
//
// Plan's racy-time rule is left out: it reads the state's CheckedAt, which
// an update's recheck writes without the lock, so the head and the bytes
// before the read position are compared whatever the file's time (a few
// bytes each, for the few files of an answer).
func (ix *Index) unchangedSinceIndexed(fs *corpus.File) bool {
	f, err := runfs.OpenFile(ix.fsys, fs.Rel)
	if err != nil {
		return false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || !runfs.AtPath(ix.root, ix.fsys, f, fs.Rel, runfs.Stat{}, info) {
		return false
	}
	st := runfs.StatOf(info)
	switch {
	case fs.Binary:
		return false // no pieces; its check is its head
	case st.Dev != fs.Dev || st.Ino != fs.Ino || st.Size < fs.ReadPos:
		return false // replaced or shrunk
	case st.Size == fs.ReadPos && (st.Size != fs.Size || st.Mtime != fs.Mtime || st.Ctime != fs.Ctime):
		return false // the size read with a new time: rewritten in place, or touched
	case st.Size > fs.ReadPos && fs.CommitPos < fs.ReadPos:
		// Grown past a pending tail (a last line without its end, a
		// record that may go on): the tail's pieces are made again with
		// what follows, so the ones indexed are not the file's now.
		return false
	}
	return runfs.Recheck(knownOf(fs), info, func() bool { return rewritten(f, fs, &ix.checkBytes) }) != runfs.RecheckFresh
}

// excluded reports whether f leaves out the pieces of file fs (a test of
// the map's length first: the evidence rules run it for every candidate).
func (f *filter) excluded(fs *corpus.File) bool { return len(f.exclude) > 0 && f.exclude[fs] }

// rankConfirmed is rank's pick for f: its hits, confirmed when f confirms.
func (ix *Index) rankConfirmed(ctx context.Context, f *filter) func(bm25.Query) ([]hit, error) {
	return func(q bm25.Query) ([]hit, error) {
		return ix.confirmedHits(f, func() ([]hit, error) { return ix.run(ctx, q, f) })
	}
}
