package bm25

// This file holds the BM25 statistics by partition: documents, terms and
// document frequencies, as batches are added and documents dropped, and
// their encoding for the persisted index (spec §15, issue 18).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"unsafe"
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
// encoded bytes (base, a read-only mapping: dense, a value by id, or
// sparse, the ids with a df and their values, whichever is smaller) and
// copy a page to the heap when it is first written (own), so that after a
// reopen the heap holds the pages the batches since touched, never a copy
// of the table; a column built in memory has no base and every page its
// own.
//
// A heap page holds a byte an id: nearly every df of a partition is below
// dfWide (on the generated 100,000 files, 100 partitions of 127,814 ids:
// 2.87 million df, 7,327 of them 256 or more), and those that are not are
// kept in wide, their byte dfWide. Pages of a uint32 an id were 37 MB of
// that run's heap, some a seventh of its peak while it was first indexed
// (issue 33); a byte an id is 9.3 MB.
type dfColumn struct {
	base    []uint32         // read only: by id, or by place in baseIDs
	baseIDs []uint32         // read only, ascending; nil: base is dense
	own     []*[dfPage]uint8 // by page (as far as a page was written); nil: base's (or zeros past it)
	wide    map[uint32]uint32
	n       int // ids the column covers
	// rank finds an id's place in baseIDs in a cache line, once the
	// column has been asked often enough (termrank.go): a query asks
	// every partition's column for each of its terms. Shared by copies of
	// the column, as baseIDs is.
	rank *rankState
}

const dfPageShift = 10

// dfPage is how many ids a page of a df column holds.
const dfPage = 1 << dfPageShift

// dfWide is a heap page's byte for a df kept in the column's wide map.
const dfWide = 0xff

func (c *dfColumn) get(id uint32) uint32 {
	if int(id) >= c.n {
		return 0
	}
	if i := int(id >> dfPageShift); i < len(c.own) && c.own[i] != nil {
		return c.ownValue(c.own[i], id)
	}
	if c.baseIDs != nil {
		if i, ok := c.baseIndex(id); ok {
			return c.base[i]
		}
		return 0
	}
	if int(id) < len(c.base) {
		return c.base[id]
	}
	return 0
}

// baseIndex returns id's place in baseIDs.
func (c *dfColumn) baseIndex(id uint32) (int, bool) {
	if c.rank != nil {
		if i, ok := c.rank.index(id, c.baseIDs, func() {}); ok { // checked with the statistics' blob
			return i, i >= 0
		}
	}
	return slices.BinarySearch(c.baseIDs, id)
}

// ownValue is id's df in its heap page p.
func (c *dfColumn) ownValue(p *[dfPage]uint8, id uint32) uint32 {
	if v := p[id&(dfPage-1)]; v != dfWide {
		return uint32(v)
	}
	return c.wide[id]
}

// set writes id's df v into its heap page p.
func (c *dfColumn) set(p *[dfPage]uint8, id, v uint32) {
	at := &p[id&(dfPage-1)]
	if v < dfWide {
		if *at == dfWide {
			delete(c.wide, id)
		}
		*at = uint8(v)
		return
	}
	if c.wide == nil {
		c.wide = map[uint32]uint32{}
	}
	*at, c.wide[id] = dfWide, v
}

// page returns the heap page of id, copying it from base on its first write.
func (c *dfColumn) page(id uint32) *[dfPage]uint8 {
	i := int(id >> dfPageShift)
	if i < len(c.own) && c.own[i] != nil {
		return c.own[i]
	}
	if i >= len(c.own) {
		c.own = append(c.own, make([]*[dfPage]uint8, i+1-len(c.own))...)
	}
	p := new([dfPage]uint8)
	var values [dfPage]uint32
	if c.basePage(i, values[:]) {
		lo := uint32(i * dfPage)
		for j, v := range values {
			if v != 0 {
				c.set(p, lo+uint32(j), v)
			}
		}
	}
	c.own[i] = p
	return p
}

// basePage writes base's values of page i into p (zeroed) and reports
// whether base has any there.
func (c *dfColumn) basePage(i int, p []uint32) bool {
	lo, hi := uint32(i*dfPage), uint32((i+1)*dfPage)
	if c.baseIDs == nil {
		if int(lo) < len(c.base) {
			copy(p, c.base[lo:min(int(hi), len(c.base))])
			return true
		}
		return false
	}
	j, _ := slices.BinarySearch(c.baseIDs, lo)
	any := false
	for ; j < len(c.baseIDs) && c.baseIDs[j] < hi; j++ {
		if id := c.baseIDs[j]; id >= lo { // out of order only in a corrupt file
			p[id-lo], any = c.base[j], true
		}
	}
	return any
}

func (c *dfColumn) add(id, n uint32) {
	p := c.page(id)
	c.set(p, id, c.ownValue(p, id)+n)
}

func (c *dfColumn) sub(id uint32) {
	p := c.page(id)
	c.set(p, id, c.ownValue(p, id)-1)
}

// grow makes the column cover ids below n (own grows as pages are
// written).
func (c *dfColumn) grow(n int) { c.n = max(c.n, n) }

// pages calls fn with the column's values page by page, n in all (a page
// not its own is base's dense slice or a scratch copy).
func (c *dfColumn) pages(fn func(values []uint32)) {
	scratch := make([]uint32, dfPage)
	for i := range (c.n + dfPage - 1) / dfPage {
		lo, hi := i*dfPage, min((i+1)*dfPage, c.n)
		switch {
		case i < len(c.own) && c.own[i] != nil:
			p := c.own[i]
			for j := range hi - lo {
				scratch[j] = c.ownValue(p, uint32(lo+j))
			}
			fn(scratch[:hi-lo])
		case c.baseIDs == nil && hi <= len(c.base):
			fn(c.base[lo:hi])
		default:
			clear(scratch)
			c.basePage(i, scratch)
			fn(scratch[:hi-lo])
		}
	}
}

// heapBytes returns the bytes the column holds on the heap (a wide df
// counted as a map's entry, some 16 bytes).
func (c *dfColumn) heapBytes() int64 {
	n := int64(cap(c.own))*8 + int64(len(c.wide))*16
	if c.rank != nil {
		n += c.rank.bytes()
	}
	for _, p := range c.own {
		if p != nil {
			n += dfPage
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
	in, at := b.partDF, 0
	for at < len(in) {
		var delta, pairs uint64
		delta, at = uvarint(in, at)
		pairs, at = uvarint(in, at)
		term += uint32(delta)
		for range pairs {
			var part, n uint64
			part, at = uvarint(in, at)
			n, at = uvarint(in, at)
			if part < uint64(len(st.parts)) {
				st.parts[part].df.add(term, uint32(n))
			}
		}
	}
}

// uvarint reads the uvarint at in[at:] and returns it and where the next
// one starts (len(in) when it is cut: Finish wrote it whole). Most are one
// byte, read inline.
func uvarint(in []byte, at int) (uint64, int) {
	if at < len(in) && in[at] < 0x80 {
		return uint64(in[at]), at + 1
	}
	if at >= len(in) {
		return 0, len(in)
	}
	v, n := binary.Uvarint(in[at:])
	if n <= 0 {
		return 0, len(in)
	}
	return v, at + n
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
	s.checkWhole()
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
	p.df.pages(func(v []uint32) { df = append(df, v...) })
	return p.docs, p.terms, df
}

// ErrStatsFormat: bytes that are not statistics of this encoding.
var ErrStatsFormat = errors.New("bm25: not encoded statistics")

const (
	statsMagic = "RLST"
	// statsVersion 2: a partition's df dense or sparse (1: always dense,
	// agents x terms x 4 bytes: most of the entry on many small files).
	statsVersion = 2
)

// statsHead is a partition's totals and how its df is laid out, as a
// section's value.
type statsHead struct {
	docs, terms int64
	ids         uint32 // the ids its df covers
	sparse      uint32 // 1: the ids with a df, then their values; 0: a value by id
}

// AppendEncoded appends the statistics' encoding to dst: the partitions'
// totals, then each one's document frequencies, dense (a value by id) or
// sparse (the ids with a df, ascending, then their values), whichever is
// smaller, as sections of raw little-endian values 8-byte aligned from
// dst's length, as a segment's (segment_codec.go).
func (st *Stats) AppendEncoded(dst []byte) []byte {
	heads := make([]statsHead, len(st.parts))
	// The encoding's size, made room for once: grown by doubling it was
	// twice its 23 MB on the generated 100,000 files, in each write of the
	// cache entry (issue 33).
	size := len(statsMagic) + 4 + sectionBytes(len(heads), int(unsafe.Sizeof(statsHead{})))
	for i := range st.parts {
		c := &st.parts[i].df
		nonzero := 0
		c.pages(func(v []uint32) {
			for _, x := range v {
				if x != 0 {
					nonzero++
				}
			}
		})
		heads[i] = statsHead{docs: st.parts[i].docs, terms: st.parts[i].terms, ids: uint32(c.n)}
		if nonzero*2 < c.n {
			heads[i].sparse = 1
			size += 2 * sectionBytes(nonzero, 4)
		} else {
			size += sectionBytes(c.n, 4)
		}
	}
	e := newEncoder(slices.Grow(dst, size), statsMagic, statsVersion)
	putSection(&e, heads)
	var ids, vals []uint32
	for i := range st.parts {
		c := &st.parts[i].df
		if heads[i].sparse == 0 {
			beginSection(&e, c.n)
			c.pages(func(v []uint32) { appendValues(&e, v) })
			endSection(&e)
			continue
		}
		ids, vals = ids[:0], vals[:0]
		id := uint32(0)
		c.pages(func(v []uint32) {
			for _, x := range v {
				if x != 0 {
					ids, vals = append(ids, id), append(vals, x)
				}
				id++
			}
		})
		putSection(&e, ids)
		putSection(&e, vals)
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
		if h.docs < 0 || h.terms < 0 || h.sparse > 1 {
			d.fail("partition %d's head", i)
			break
		}
		c := dfColumn{base: getSection[uint32](&d)}
		if h.sparse == 1 {
			c.baseIDs, c.base = c.base, getSection[uint32](&d)
			c.rank = &rankState{}
			if len(c.baseIDs) != len(c.base) {
				d.fail("partition %d: %d ids, %d values", i, len(c.baseIDs), len(c.base))
			}
		} else if len(c.base) != int(h.ids) {
			d.fail("partition %d: %d values for %d ids", i, len(c.base), h.ids)
		}
		if d.err != nil {
			break
		}
		c.grow(int(h.ids))
		st.parts[i] = partStats{docs: h.docs, terms: h.terms, df: c}
	}
	if d.err == nil && d.off != len(d.b) {
		d.fail("%d bytes after the statistics", len(d.b)-d.off)
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStatsFormat, d.err)
	}
	return st, nil
}
