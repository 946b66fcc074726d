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
	df    []uint32 // by global term id
}

// Grow makes room for partitions up to part.
func (st *Stats) Grow(part uint32) {
	for int(part) >= len(st.parts) {
		st.parts = append(st.parts, partStats{})
	}
}

// Add counts a finished builder's documents, whose local term ids global
// maps (Dict.Assign).
func (st *Stats) Add(b *Builder, global []uint32) {
	ids := 0
	for _, id := range global {
		ids = max(ids, int(id)+1)
	}
	for part, df := range b.partDF {
		st.Grow(uint32(part))
		p := &st.parts[part]
		p.docs += int64(b.partDocs[part])
		p.terms += b.partLen[part]
		if len(p.df) < ids {
			p.df = append(p.df, make([]uint32, ids-len(p.df))...)
		}
		for local, n := range df {
			if n > 0 {
				p.df[global[local]] += n
			}
		}
	}
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
		p.df[t]--
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
					p.df[term]--
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
		if (part < 0 || part == a) && int(id) < len(st.parts[a].df) {
			df += int64(st.parts[a].df[id])
		}
	}
	return df
}

// Footprint returns the bytes the document frequencies take.
func (st *Stats) Footprint() int64 {
	var n int64
	for _, p := range st.parts {
		n += int64(cap(p.df)) * 4
	}
	return n
}

// Parts returns how many partitions the statistics have.
func (st *Stats) Parts() int { return len(st.parts) }

// Part returns partition part's live documents, their terms, and the
// document frequency of each global term id (shared: read only).
func (st *Stats) Part(part int) (docs, terms int64, df []uint32) {
	p := &st.parts[part]
	return p.docs, p.terms, p.df
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
	e := segmentEncoder{b: dst, base: len(dst)}
	e.b = append(e.b, statsMagic...)
	e.b = binary.LittleEndian.AppendUint32(e.b, statsVersion)
	heads := make([]statsHead, len(st.parts))
	for i, p := range st.parts {
		heads[i] = statsHead{p.docs, p.terms}
	}
	putSection(&e, heads)
	for _, p := range st.parts {
		putSection(&e, p.df)
	}
	return e.b
}

// DecodeStats reads statistics AppendEncoded wrote.
func DecodeStats(b []byte) (*Stats, error) {
	if !littleEndian() {
		return nil, fmt.Errorf("%w: a big-endian machine", ErrStatsFormat)
	}
	b = alignedBytes(b)
	if len(b) < 8 || string(b[:4]) != statsMagic || binary.LittleEndian.Uint32(b[4:]) != statsVersion {
		return nil, fmt.Errorf("%w: magic or version", ErrStatsFormat)
	}
	d := segmentDecoder{b: b, off: 8}
	heads := getSection[statsHead](&d)
	st := &Stats{parts: make([]partStats, len(heads))}
	for i, h := range heads {
		if h.docs < 0 || h.terms < 0 {
			d.fail("partition %d's totals", i)
		}
		st.parts[i] = partStats{docs: h.docs, terms: h.terms, df: append([]uint32(nil), getSection[uint32](&d)...)}
	}
	if d.err == nil && d.off != len(b) {
		d.fail("%d bytes after the statistics", len(b)-d.off)
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStatsFormat, d.err)
	}
	return st, nil
}
