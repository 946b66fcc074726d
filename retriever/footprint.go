package retriever

import "unsafe"

// Footprint is the memory the index holds, by part, in bytes (capacity of the
// slices it owns); benchmarks report it beside the heap.
type Footprint struct {
	Pieces    int64 // live and dead pieces
	Postings  int64 // encoded postings
	Columns   int64 // per-piece columns
	Terms     int64 // per-segment term tables and skips
	Stats     int64 // per-agent document frequencies
	Dict      int   // distinct terms
	Segments  int
	LineIndex int64
	Records   int64 // record tables (records.go)
	NRecords  int64 // records in them
}

// Footprint measures the index.
func (ix *Index) Footprint() Footprint {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var f Footprint
	for _, s := range ix.segments {
		f.Segments++
		f.Pieces += int64(s.docs())
		f.Postings += int64(cap(s.post))
		f.Columns += int64(cap(s.hash))*8 + int64(cap(s.lineBase)+cap(s.convs)+cap(s.conv32))*4 + int64(cap(s.fileRuns))*8 +
			int64(cap(s.lineStep)) + int64(cap(s.farLine))*8 +
			int64(cap(s.start16)+cap(s.blen16)+cap(s.conv16))*2 + int64(cap(s.dl)+cap(s.flags)) + int64(cap(s.dead))*8 +
			int64(len(s.wide))*16 + int64(len(s.longDL))*8
		f.Terms += int64(cap(s.terms)+cap(s.termSample))*4 + int64(cap(s.meta))*int64(unsafe.Sizeof(termMeta{})) + int64(cap(s.skips))*16
		for _, l := range s.layers {
			f.Terms += int64(cap(l.dl))
		}
		for _, d := range s.dense {
			f.Terms += int64(cap(d.bits))*8 + int64(cap(d.tfAt))*4 + int64(cap(d.tfLow))*2 + int64(cap(d.tfs)) + int64(len(d.bigTF))*8 + int64(cap(d.winMax))
		}
	}
	for _, st := range ix.stats {
		f.Stats += int64(cap(st.df)) * 4
	}
	for _, fs := range ix.files {
		f.LineIndex += int64(cap(fs.lineIndex)) * 8
		f.Records += fs.recs.footprint()
		f.NRecords += int64(fs.recs.len())
	}
	ix.dictMu.RLock()
	f.Dict = len(ix.dict)
	ix.dictMu.RUnlock()
	return f
}
