package bm25

// This file holds the BM25 statistics by partition: documents, terms and
// document frequencies, as batches are added and documents dropped, and
// their encoding for the persisted index (spec §15, issue 18).

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Stats are the BM25 statistics of an index by partition: a query over
// one partition or over all takes its idf and average length from the
// partitions it searches. The owner guards them with the lock it holds
// while it changes the segments.
type Stats struct {
	parts []partStats
}

// partStats are one partition's statistics over its live documents.
type partStats struct {
	docs  int64
	terms int64
	df    dfColumn // by global term id
}

// A dfColumn holds a partition's document frequencies by global term id,
// in pages of dfPage ids. Decoded statistics read their column in the
// encoded bytes (base, a read-only mapping) and copy a page to the heap
// when it is first written (own), so that after a reopen the heap holds
// the pages the batches since touched, never a copy of the table; a
// column built in memory has no base and every page its own.
type dfColumn struct {
	base []uint32          // read only
	own  []*[dfPage]uint32 // by page; nil: the page is base's (or zeros past it)
	n    int               // ids the column covers
}

const dfPageShift = 10

// dfPage is how many ids a page of a df column holds (4 KiB: a memory page).
const dfPage = 1 << dfPageShift

func (c *dfColumn) get(id uint32) uint32 {
	if int(id) >= c.n {
		return 0
	}
	if p := c.own[id>>dfPageShift]; p != nil {
		return p[id&(dfPage-1)]
	}
	if int(id) < len(c.base) {
		return c.base[id]
	}
	return 0
}

// page returns the heap page of id, copying it from base on its first write.
func (c *dfColumn) page(id uint32) *[dfPage]uint32 {
	i := int(id >> dfPageShift)
	if p := c.own[i]; p != nil {
		return p
	}
	p := new([dfPage]uint32)
	if lo := i * dfPage; lo < len(c.base) {
		copy(p[:], c.base[lo:min(lo+dfPage, len(c.base))])
	}
	c.own[i] = p
	return p
}

func (c *dfColumn) add(id, n uint32) { c.page(id)[id&(dfPage-1)] += n }

func (c *dfColumn) sub(id uint32) { c.page(id)[id&(dfPage-1)]-- }

// grow makes the column cover ids below n.
func (c *dfColumn) grow(n int) {
	if n <= c.n {
		return
	}
	if pages := (n + dfPage - 1) / dfPage; pages > len(c.own) {
		c.own = append(c.own, make([]*[dfPage]uint32, pages-len(c.own))...)
	}
	c.n = n
}

// pages returns the column's values page by page, n in all (for its
// encoding: base's pages are not copied).
func (c *dfColumn) pages() [][]uint32 {
	out := make([][]uint32, 0, len(c.own))
	zeros := make([]uint32, dfPage)
	for i, p := range c.own {
		lo, hi := i*dfPage, min((i+1)*dfPage, c.n)
		switch {
		case p != nil:
			out = append(out, p[:hi-lo])
		case hi <= len(c.base):
			out = append(out, c.base[lo:hi])
		default: // past base: zeros, and base's tail if it ends in this page
			part := c.base[min(lo, len(c.base)):]
			out = append(out, part, zeros[:hi-lo-len(part)])
		}
	}
	return out
}

// heapBytes returns the bytes the column holds on the heap.
func (c *dfColumn) heapBytes() int64 {
	n := int64(cap(c.own)) * 8
	for _, p := range c.own {
		if p != nil {
			n += dfPage * 4
		}
	}
	return n
}

// Grow makes room for partitions up to part.
func (st *Stats) Grow(part uint32) {
	for int(part) >= len(st.parts) {
		st.parts = append(st.parts, partStats{})
	}
}

// Add counts a finished builder's documents, whose local term ids global
// maps (Dict.Assign). Finish counted each term's df in each partition it
// is in (where Add counted a dense df by partition over the batch's terms,
// partitions x terms x 4 bytes: most of a batch's memory on many small
// files), so the owner's lock is held for one write a pair.
func (st *Stats) Add(b *Builder, global []uint32) {
	ids := 0
	for _, id := range global {
		ids = max(ids, int(id)+1)
	}
	for part, docs := range b.partDocs {
		st.Grow(uint32(part))
		p := &st.parts[part]
		p.docs += int64(docs)
		p.terms += b.partLen[part]
		p.df.grow(ids)
	}
	term := uint32(0)
	for in := b.partDF; len(in) > 0; {
		delta, pairs := uvarint(&in), uvarint(&in)
		term += uint32(delta)
		for range pairs {
			part, n := uvarint(&in), uvarint(&in)
			if part < uint64(len(st.parts)) {
				st.parts[part].df.add(term, uint32(n))
			}
		}
	}
}

// uvarint reads a uvarint off the front of in (0 and an empty in when it
// is cut: Finish wrote it whole).
func uvarint(in *[]byte) uint64 {
	v, n := binary.Uvarint(*in)
	if n <= 0 {
		*in = nil
		return 0
	}
	*in = (*in)[n:]
	return v
}

// Retract kills document d of s, of partition part, whose global terms
// and length the owner kept, and takes it out of the statistics; a dead
// document is left as it is.
func (st *Stats) Retract(part uint32, s *Segment, d uint32, terms []uint32, dl uint16) {
	if !s.Kill(d) {
		return
	}
	p := &st.parts[part]
	p.docs--
	p.terms -= int64(dl)
	for _, t := range terms {
		p.df.sub(t)
	}
}

// Drop kills the documents [lo, hi) of s, of partition part, and takes them
// out of the statistics. The df of their terms is found by scanning the
// segment's postings.
func (st *Stats) Drop(part uint32, s *Segment, lo, hi uint32) {
	p := &st.parts[part]
	var buf [2]list
	for i, term := range s.terms {
		// Each of a split term's lists is in document order on its own.
		for _, l := range s.lists(i, &buf) {
			it := l.it
			it.advance(lo)
			for ; it.valid && it.doc < hi; it.next() {
				if !s.Dead(it.doc) {
					p.df.sub(term)
				}
			}
		}
	}
	for d := lo; d < hi; d++ {
		if s.Kill(d) {
			p.docs--
			p.terms -= int64(s.Len(d))
		}
	}
}

// Docs returns the live documents of partition part (-1: of all).
func (st *Stats) Docs(part int) int64 {
	docs, _ := st.totals(part)
	return docs
}

// totals returns the live documents and their terms in partition part (-1:
// in all).
func (st *Stats) totals(part int) (docs, terms int64) {
	for a := range st.parts {
		if part < 0 || part == a {
			docs += st.parts[a].docs
			terms += st.parts[a].terms
		}
	}
	return docs, terms
}

// df returns the document frequency of term id in partition part (-1: in
// all).
func (st *Stats) df(part int, id uint32) int64 {
	var df int64
	for a := range st.parts {
		if part < 0 || part == a {
			df += int64(st.parts[a].df.get(id))
		}
	}
	return df
}

// Footprint returns the bytes the document frequencies take on the heap
// (decoded statistics read the rest in the encoded bytes).
func (st *Stats) Footprint() int64 {
	var n int64
	for i := range st.parts {
		n += st.parts[i].df.heapBytes()
	}
	return n
}

// Parts returns how many partitions the statistics have.
func (st *Stats) Parts() int { return len(st.parts) }

// Part returns partition part's live documents, their terms, and the
// document frequency of each global term id (a copy: for tests and
// checks, not the search path).
func (st *Stats) Part(part int) (docs, terms int64, df []uint32) {
	p := &st.parts[part]
	df = make([]uint32, 0, p.df.n)
	for _, pg := range p.df.pages() {
		df = append(df, pg...)
	}
	return p.docs, p.terms, df
}

// ErrStatsFormat: bytes that are not statistics of this encoding.
var ErrStatsFormat = errors.New("bm25: not encoded statistics")

const (
	statsMagic   = "RLST"
	statsVersion = 1
)

// statsHead is a partition's totals, as a section's value.
type statsHead struct{ docs, terms int64 }

// AppendEncoded appends the statistics' encoding to dst: the partitions'
// totals, then each one's document frequencies, as sections of raw
// little-endian values 8-byte aligned from dst's length, as a segment's
// (segment_codec.go).
func (st *Stats) AppendEncoded(dst []byte) []byte {
	e := newEncoder(dst, statsMagic, statsVersion)
	heads := make([]statsHead, len(st.parts))
	for i, p := range st.parts {
		heads[i] = statsHead{p.docs, p.terms}
	}
	putSection(&e, heads)
	for i := range st.parts {
		putSection(&e, st.parts[i].df.pages()...)
	}
	return e.b
}

// DecodeStats reads statistics AppendEncoded wrote. Their document
// frequencies point into b, which must stay unchanged and mapped while the
// statistics are used: a write copies the page it changes to the heap.
func DecodeStats(b []byte) (*Stats, error) {
	d, err := newDecoder(b, statsMagic, statsVersion, ErrStatsFormat)
	if err != nil {
		return nil, err
	}
	heads := getSection[statsHead](&d)
	st := &Stats{parts: make([]partStats, len(heads))}
	for i, h := range heads {
		if h.docs < 0 || h.terms < 0 {
			d.fail("partition %d's totals", i)
		}
		base := getSection[uint32](&d)
		st.parts[i] = partStats{docs: h.docs, terms: h.terms, df: dfColumn{base: base}}
		st.parts[i].df.grow(len(base))
	}
	if d.err == nil && d.off != len(d.b) {
		d.fail("%d bytes after the statistics", len(d.b)-d.off)
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStatsFormat, d.err)
	}
	return st, nil
}
