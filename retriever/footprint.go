package retriever

// This file holds the index's footprint: the memory it holds, by part.

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
	Records   int64 // record tables (internal/records)
	NRecords  int64 // records in them
}

// Footprint measures the index.
func (ix *Index) Footprint() Footprint {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var f Footprint
	for _, s := range ix.state.Segments {
		e := s.Footprint()
		f.Segments++
		f.Pieces += e.Docs
		f.Postings += e.Postings
		f.Terms += e.Terms
		f.Columns += e.Columns + s.Columns.ColumnBytes()
	}
	f.Stats = ix.state.Stats.Footprint()
	for _, fs := range ix.state.Files {
		lines, recs := fs.ColumnSizes() // a restored file's stay unread
		f.LineIndex += int64(cap(lines)) * 8
		f.Records += recs.Footprint()
		f.NRecords += int64(recs.Len())
	}
	f.Dict = ix.state.Dict.Len()
	return f
}
