package bm25

// This file holds the seam between the scoring paths and the owner's rules
// of what may be a hit: the scoring paths know documents of segments and ask
// a Filter, only for documents whose score can still enter the top k.

import (
	"cmp"
	"slices"
)

// A Filter says which documents may be hits. Its rules are asked once a
// group run of a segment's documents where they can be (Group), a document
// at a time only where they cannot (Check). A segment is named by its place
// in the slice given to Search; a dead document is never asked about.
type Filter interface {
	// Group decides what it can for the documents of segment seg that
	// belong to group.
	Group(seg int, group uint32) Verdict
	// Check decides for live document doc of group, whose verdict was
	// CheckEach; the documents of a segment are asked in increasing order
	// within each scoring path.
	Check(seg int, doc, group uint32) bool
	// Accept reports whether live document doc of group may be a hit,
	// asked in any order.
	Accept(seg int, doc, group uint32) bool
}

// Verdict is a Filter's answer for a group of a segment's documents.
type Verdict int

// Verdicts of a Filter on a group.
const (
	RejectAll Verdict = iota // no document of the group may be a hit
	AcceptAll                // every live document may
	CheckEach                // Check decides, a document at a time
)

// segRef is a segment and its place in the slice given to Search, which
// the Filter and the hits name it by.
type segRef struct {
	*Segment
	n int
}

// docCursor answers for the documents of one segment asked in increasing
// order, so that what holds for a group run is asked once a run. It is a
// value of the scoring path that walks the segment: asking it is a direct
// call, and making one allocates nothing.
type docCursor struct {
	f Filter
	s segRef
	runCursor
	group   uint32 // the current run's
	verdict Verdict
}

// newDocCursor returns a cursor over s's documents, before its first run:
// the first document asked enters its run. A segment's first run is not
// asked about unless a document of it is (its file's state, met cold by
// each query, was read for every segment, issue 33).
func newDocCursor(f Filter, s segRef) docCursor {
	return docCursor{f: f, s: s, runCursor: runCursor{groups: s.groups}}
}

// enter enters run i, and asks the filter about its group.
func (c *docCursor) enter(i int) {
	c.runCursor.enter(i)
	c.ask()
}

// ask asks the filter about the current run's group.
func (c *docCursor) ask() {
	c.group = c.groups[c.i].group
	c.verdict = c.f.Group(c.s.n, c.group)
}

// groupAt returns the group of document d (at or after the last one
// asked), entering its run.
func (c *docCursor) groupAt(d uint32) uint32 {
	if d >= c.next { // checked here too: a document of the run is a compare, no call
		c.advance(d)
		c.ask()
	}
	return c.group
}

// runFrom returns the run of g that holds document d, galloped to from
// run lo, whose first document is at or before d: documents are asked in
// increasing order, mostly a run or a few ahead. A binary search of all
// the runs for each new run (a query without the context asks the inner
// filter of most documents of a block below the outer threshold) was a
// tenth of such a query's instructions, and its first steps' lines cold
// (issue 33).
func runFrom(g []groupRun, lo int, d uint32) int {
	step := 1
	for lo+step < len(g) && g[lo+step].lo <= d {
		lo += step
		step *= 2
	}
	hi := min(lo+step, len(g)) // g[hi].lo > d, or hi is past the last
	i, _ := slices.BinarySearchFunc(g[lo:hi], d+1, func(r groupRun, t uint32) int { return cmp.Compare(r.lo, t) })
	return lo + i - 1
}

// runCursor gives the groups of a segment's documents asked in increasing
// order (a block's), without a filter: Accept's callers (see accept), and
// docCursor's runs.
type runCursor struct {
	groups []groupRun
	i      int    // the current run
	next   uint32 // the next run's first document (0 before the first)
}

// groupAt returns the group of document d, at or after the last one asked.
func (c *runCursor) groupAt(d uint32) uint32 {
	if d >= c.next {
		c.advance(d)
	}
	return c.groups[c.i].group
}

// advance enters the run that holds document d (at or after the last one
// asked) when d is past the current one, and reports whether it did: the
// next run is galloped to from the current (runFrom), from the first
// before any.
func (c *runCursor) advance(d uint32) bool {
	if d < c.next {
		return false
	}
	lo := 0
	if c.next != 0 { // entered: d is at or past the next run's first
		lo = c.i + 1
	}
	c.enter(runFrom(c.groups, lo, d))
	return true
}

// enter enters run i.
func (c *runCursor) enter(i int) {
	c.i, c.next = i, ^uint32(0)
	if i+1 < len(c.groups) {
		c.next = c.groups[i+1].lo
	}
}

// rejects reports whether the filter rejects the whole group run of
// document d (at or after the last one asked): its documents need no score.
func (c *docCursor) rejects(d uint32) bool {
	c.groupAt(d)
	return c.verdict == RejectAll
}

// rejectsThrough reports whether the filter rejects whole every group run
// that holds a document from lo to hi (lo at or after the last document
// asked): none of them needs decoding. It leaves the cursor at the first run
// not rejected whole, so a later document of a run before it is not
// rejected by rejects: a cursor asked so is a pre-filter, never the one
// whose at decides.
func (c *docCursor) rejectsThrough(lo, hi uint32) bool {
	c.groupAt(lo)
	for c.verdict == RejectAll {
		if c.next > hi {
			return true
		}
		c.enter(c.i + 1)
	}
	return false
}

// at reports whether document d (at or after the last one asked) is alive
// and may be a hit, and its group.
func (c *docCursor) at(d uint32) (bool, uint32) {
	c.groupAt(d)
	switch {
	case c.verdict == RejectAll || c.s.Dead(d):
		return false, 0
	case c.verdict == AcceptAll:
		return true, c.group
	}
	return c.f.Check(c.s.n, d, c.group), c.group
}

// accept reports whether document d of s, asked in increasing order of
// runs' (a block's documents), is alive and may be a hit, and its group.
func accept(f Filter, s segRef, runs *runCursor, d uint32) (bool, uint32) {
	if s.Dead(d) {
		return false, 0
	}
	g := runs.groupAt(d)
	return f.Accept(s.n, d, g), g
}
