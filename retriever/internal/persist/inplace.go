package persist

// This file holds a restored file state's line index and record table read
// in place from the state blob's mapping (issue 33): the reopen neither
// checks nor copies them (at 1 GB some 90 MB: their copy and the state's
// whole checksum were half of the reopen's CPU), and each file's are
// checked (their chunks, store.Blob.CheckRange, and the values a lookup
// indexes with) and copied onto the heap at their first use
// (corpus.Mapped.Own), for the files a request reads only. The writer
// encodes a file not used yet from the mapping, checked, without copying it.
//
// Why copies at first use, not reads of the mapping after its check: every
// read of a mapped page may fault (a blob's file cut under the index), and
// a fault or a bad chunk must become the entry's corruption, not a crash
// nor a lock left held. The copy is the one read of these columns in the
// mapping, in one function (mappedColumns.own), which catches either
// itself: the views of records, failures, outlines, diagnostics,
// conversations and the read-backs then read heap memory, as they did
// before, and need no guard of their own around each read.
//
// What a failed check leaves: the file's columns are given empty (an
// answer made of them is wrong), the snapshot is marked corrupt, and the
// failure is recorded here. Every guarded run (Guard.Run: a search's
// answer, an update, the writer's write, and the retriever's views) that
// started while the restored files could still be read reports a fault
// when one was found before it ended, so that its answer is never given:
// the entry is dropped in one WARN (DropMapping), every file forgotten,
// and the request answered again from the run indexed afresh.

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"runls/internal/store"
	"runls/retriever/internal/bm25"
	"runls/retriever/internal/records"
)

// mappedColumns are the in-place columns of one restore.
type mappedColumns struct {
	snap  *store.Snapshot // nil: none (trustedBacking)
	back  bm25.Backing    // the state blob's
	convs int             // conversation ids the records may name

	mu     sync.Mutex // one file made the heap's at a time; closed
	closed bool       // the snapshot is closed: nothing is mapped
	failed atomic.Pointer[columnsFailure]
}

// columnsFailure is the first failure found reading the columns.
type columnsFailure struct {
	err     error
	checked bool // a check failed, not a read of the mapping
}

// mappedFile is one file's columns in the mapping (corpus.Mapped).
type mappedFile struct {
	cols  *mappedColumns
	lines []int64
	recs  *records.Table // nil for a note
	own   atomic.Pointer[ownedColumns]
}

// ownedColumns are a file's columns made the heap's.
type ownedColumns struct {
	lines []int64
	recs  *records.Table
}

// Own returns the file's columns in memory of their own, made at the first
// call (corpus.Mapped).
func (m *mappedFile) Own() ([]int64, *records.Table) {
	if o := m.own.Load(); o != nil {
		return o.lines, o.recs
	}
	return m.cols.own(m)
}

// Borrow returns the file's columns in memory of their own, without
// keeping them when they are not the heap's yet (corpus.Mapped).
func (m *mappedFile) Borrow() ([]int64, *records.Table) {
	if o := m.own.Load(); o != nil {
		return o.lines, o.recs
	}
	return m.cols.borrow(m)
}

// InPlace returns the columns as mapped, for their lengths (corpus.Mapped).
func (m *mappedFile) InPlace() ([]int64, *records.Table) { return m.lines, m.recs }

// own makes m's columns the heap's, once.
func (c *mappedColumns) own(m *mappedFile) ([]int64, *records.Table) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := m.own.Load()
	if o == nil {
		o, _ = c.copyOut(m)
		m.own.Store(o)
	}
	return o.lines, o.recs
}

// copyOut checks m's columns and copies them out of the mapping; the caller
// holds c.mu. Columns found bad (or a fault reading them) are recorded
// (fail) and given empty, with the error.
func (c *mappedColumns) copyOut(m *mappedFile) (*ownedColumns, error) {
	o := &ownedColumns{}
	err, checked := errors.New("read after the cache entry was closed"), false
	if !c.closed {
		err, checked = c.checked(func() {
			c.check(m, true)
			o.lines = keep(m.lines)
			if m.recs != nil {
				o.recs = m.recs.Own()
			}
		})
	}
	if err != nil {
		c.fail(err, checked)
		o = &ownedColumns{}
		if m.recs != nil {
			o.recs = &records.Table{}
		}
	}
	return o, err
}

// borrow copies m's columns out of the mapping, checked, for one caller:
// the checks and the failure are own's, and columns found bad are the
// file's (empty) from then on, as own leaves them.
func (c *mappedColumns) borrow(m *mappedFile) ([]int64, *records.Table) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o := m.own.Load(); o != nil {
		return o.lines, o.recs
	}
	o, err := c.copyOut(m)
	if err != nil {
		m.own.Store(o)
	}
	return o.lines, o.recs
}

// check checks m's bytes (their chunks), and, with values, the values a
// lookup indexes with; a failure panics with a checkFailure.
func (c *mappedColumns) check(m *mappedFile, values bool) {
	bm25.CheckValues(c.back, m.lines)
	if m.recs == nil {
		return
	}
	r := m.recs.Columns()
	bm25.CheckValues(c.back, r.Line)
	bm25.CheckValues(c.back, r.Sec)
	bm25.CheckValues(c.back, r.Ms)
	bm25.CheckValues(c.back, r.Conv)
	bm25.CheckValues(c.back, r.Meta)
	bm25.CheckValues(c.back, r.Over)
	bm25.CheckValues(c.back, r.Spans)
	bm25.CheckValues(c.back, r.Runs)
	bm25.CheckValues(c.back, r.Descents)
	if values {
		if err := m.recs.CheckValues(c.convs); err != nil {
			c.back.Corrupt(err)
		}
	}
}

// checked runs read, which reads the mapping, with a failed check (checked)
// or a fault on the snapshot's mapping turned into its error; any other
// panic goes on.
func (c *mappedColumns) checked(read func()) (err error, checked bool) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		r := recover()
		if r == nil {
			return
		}
		if cf, ok := r.(*checkFailure); ok {
			err, checked = cf.err, true
			return
		}
		if f, ok := r.(interface{ Addr() uintptr }); ok && c.snap != nil {
			if ferr := c.snap.Fault(f.Addr()); ferr != nil {
				err = ferr
				return
			}
		}
		panic(r)
	}()
	read()
	return nil, false
}

// fail records the first failure.
func (c *mappedColumns) fail(err error, checked bool) {
	c.failed.CompareAndSwap(nil, &columnsFailure{fmt.Errorf("a file's columns in the state blob: %w", err), checked})
}

// close says the snapshot is being closed: a file made the heap's after is
// given empty, and fails.
func (c *mappedColumns) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
}

// writeColumns returns a file's line index and record table for the
// writer's encoding: a mapped file's from the mapping, checked (its bytes,
// which are written as they are), not copied. A failed check panics with a
// checkFailure, and a fault reading them faults: the writer runs guarded.
func writeColumns(lines []int64, recs *records.Table, m *mappedFile) ([]int64, *records.Table) {
	if m == nil {
		return lines, recs
	}
	if o := m.own.Load(); o != nil {
		return o.lines, o.recs
	}
	m.cols.check(m, false)
	return m.lines, m.recs
}

// columnsLive reports whether the restored files may still be read: the
// entry was not dropped and its files forgotten (Guard.Run).
func (w *Writer) columnsLive() bool {
	return w != nil && w.cols != nil && !w.guard.forgotten.Load()
}

// columnsFailed is the failure found in the restored files' columns, if
// any, for a guarded run that started while they were live, as the fault
// of that run.
func (w *Writer) columnsFailed(where string, live bool) error {
	if !live {
		return nil
	}
	if f := w.cols.failed.Load(); f != nil {
		return &mappingFault{where: where, err: f.err, checked: f.checked}
	}
	return nil
}
