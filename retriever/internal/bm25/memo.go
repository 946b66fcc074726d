package bm25

// This file holds Memo: the documents a query's pairs path scored in each
// segment, kept for a second search of the same query.

import (
	"slices"
	"sync"
)

// A Memo keeps, for a second Search of the same query over the same
// segments and statistics, what the first computed that depends on neither
// the filter, the tie order nor the threshold: the documents of each segment
// that hold two of the query's terms (exhaustivePairs), with their scores.
// An owner that ranks a query twice (without its rules, then with them)
// gives both searches one Memo: a query whose best documents tie by the
// thousand (templated log lines) scores them all each time, and the second
// time only offers them. Search forgets what a Memo holds when the query's
// terms, their idf or the average length differ; the owner keeps the
// segments unchanged between the two (a segment's dead bits may change: they
// are read at each offer). Safe for the halves of one search, not for two
// searches at once.
type Memo struct {
	mu    sync.Mutex
	terms []queryTerm
	avgdl float64
	segs  map[*Segment]scoredDocs
}

// scoredDocs is a segment's candidates, ascending, and their scores.
type scoredDocs struct {
	docs   []uint32
	scores []float64
}

// begin makes the memo the query's: what it holds is dropped when it was
// another query's.
func (m *Memo) begin(terms []queryTerm, avgdl float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.avgdl != avgdl || !slices.Equal(m.terms, terms) {
		m.terms, m.avgdl, m.segs = slices.Clone(terms), avgdl, nil
	}
}

// get returns what the memo holds for s.
func (m *Memo) get(s *Segment) (scoredDocs, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sd, ok := m.segs[s]
	return sd, ok
}

// put keeps a copy of s's candidates and scores.
func (m *Memo) put(s *Segment, docs []uint32, scores []float64) {
	sd := scoredDocs{docs: slices.Clone(docs), scores: slices.Clone(scores)}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.segs == nil {
		m.segs = map[*Segment]scoredDocs{}
	}
	m.segs[s] = sd
}
