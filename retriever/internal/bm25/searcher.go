package bm25

// This file holds Search, a query's state and buffers, its statistics over
// the partitions searched, and run and search: the order in which the scoring paths
// (prefill, champions, MaxScore, exhaustive) are taken over the segments.

import (
	"cmp"
	"context"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
)

type query struct {
	norms  *NormTable
	terms  []queryTerm
	part   int // -1: every partition
	k      int
	groups GroupOrder
	docs   bool      // Query.DocOrder
	inner  Filter    // a nested search's inner filter (SearchNested), or nil
	best   []float64 // scratch for reach, by query term (cleared before each use)
	*scratch
}

// scratch is a query's buffers, kept across segments, and across queries
// in the index's pool: a query would otherwise allocate some 100 KB, whose
// collection costs every query.
type scratch struct {
	decoded []decodedTerm // exhaustive's
	// prefill's and single's decoded block
	blockDocs, blockTFs []uint32
	cands               []uint32
	merged              [2][]uint32 // exhaustivePairs' candidates, merged
	candDLs             []uint16    // the lengths of cands
	candScores          []float64   // the scores of cands
	candTFs             []uint32    // exhaustivePairs' tfs of cands, a list's after another's
	seen                []uint64    // exhaustivePairs' bit per document, clear between uses
	cursors             []termCursor
	work                []segmentWork
	sortedWork          []segmentWork // search's work by reach (byReach)
	reachOrder          []placedReach
	pf                  prefillScratch
	pending             []pendingSegment // search's
	done                []bool
	rest                []termCursor
	cum, contrib        []float64 // maxScore's
	bestBuf             []float64 // room for query.best
	touched             uint64    // what topK.touchKeys loaded, kept so that its loads stay
}

// getScratch takes buffers from the pool; putScratch gives them back.
func (sr *Searcher) getScratch() *scratch {
	if s, ok := sr.scratch.Get().(*scratch); ok {
		return s
	}
	return &scratch{}
}

func (sr *Searcher) putScratch(s *scratch) {
	// The segments the cursors point into may be dropped: let them go.
	clear(s.cursors[:cap(s.cursors)])
	clear(s.work[:cap(s.work)])
	clear(s.sortedWork[:cap(s.sortedWork)])
	clear(s.pf.others[:cap(s.pf.others)])
	clear(s.pending[:cap(s.pending)])
	clear(s.rest[:cap(s.rest)])
	clear(s.pf.gdense[:cap(s.pf.gdense)])
	s.cursors, s.work = s.cursors[:0], s.work[:0]
	sr.scratch.Put(s)
}

// normsFor returns the length norms at avgdl: the last query's when the
// average is the same (it changes only as the index does).
func (sr *Searcher) normsFor(avgdl float64) *NormTable {
	if c := sr.norms.Load(); c != nil && c.avgdl == avgdl {
		return c.table
	}
	c := &cachedNorms{avgdl: avgdl, table: NewNormTable(avgdl)}
	sr.norms.Store(c)
	return c.table
}

// cachedNorms is a norm table and the average length it is for.
type cachedNorms struct {
	avgdl float64
	table *NormTable
}

// reach is the most a document can score from the cursors that use allows: the
// sum, over query terms, of the largest bound of the term's cursors. A split
// term's lists hold distinct documents, so a document gets one of their parts, not
// both.
func (q *query) reach(cs []termCursor, use func(i int) bool) float64 {
	clear(q.best)
	for i := range cs {
		if use == nil || use(i) {
			q.best[cs[i].qi] = max(q.best[cs[i].qi], cs[i].ub)
		}
	}
	return SumInOrder(q.best)
}

type queryTerm struct {
	id  uint32
	idf float64
}

// A Query is what Search is asked: the global ids of the query's distinct
// terms (Dict.Lookup), the partition searched (-1: every partition) and how
// many hits to return. The partition chooses the statistics (idf, average
// length); a segment does not know its documents' partitions, so the
// Filter keeps the others' out (most cheaply by group).
type Query struct {
	Terms []uint32
	Part  int
	K     int
	// Groups, when set, is the tie order's first keys (GroupOrder), which
	// it must agree with: it spares asking the TieOrder, and orders nothing
	// differently.
	Groups GroupOrder
	// DocOrder, when set, says that the tie order agrees with the documents'
	// own order within a group of a segment: of two live documents of one
	// segment and one group, the lower-numbered comes first (an owner that
	// adds a group's documents in its order, and merges segments in order).
	// A tie of two such documents is then decided by their numbers, not by
	// the TieOrder: a templated line's thousands of ties in one file lose
	// to the worst kept hit of that file in a comparison of integers.
	DocOrder bool
}

// Search scores a query over segs, whose statistics are st: the best K
// documents that f accepts, of distinct keys, equal scores in tie's order.
// The caller keeps segs and st unchanged until it returns.
func (sr *Searcher) Search(ctx context.Context, segs []*Segment, st *Stats, qy Query, f Filter, tie TieOrder) ([]Hit, error) {
	hits, _, err := sr.SearchNested(ctx, segs, st, qy, f, nil, tie)
	return hits, err
}

// SearchNested is Search under two filters at once, in one walk of the
// lists: the best K documents that outer accepts (Search's answer with
// outer) and the best K that inner accepts (Search's with inner), where
// inner accepts no document that outer rejects. Every path prunes by the
// lower of the two heaps' thresholds and asks inner's Check and Accept only
// of documents that outer accepted and that would enter inner's heap
// (inner's group verdicts also skip runs that no heap can take): an owner that
// ranks a query without its rules and with them (retriever) walks the
// lists, reads the lengths and asks the outer filter once, where two
// searches did each twice (issue 33). A nil inner: Search with outer.
func (sr *Searcher) SearchNested(ctx context.Context, segs []*Segment, st *Stats, qy Query, outer, inner Filter, tie TieOrder) (outerHits, innerHits []Hit, err error) {
	if qy.K < 1 {
		return nil, nil, nil // no hit asked for (the retriever refuses such a topK before)
	}
	q := &query{part: qy.Part, k: qy.K, groups: qy.Groups, docs: qy.DocOrder, inner: inner}
	docs, terms := st.totals(qy.Part)
	for _, id := range qy.Terms {
		df := st.df(qy.Part, id)
		if df == 0 {
			continue
		}
		q.terms = append(q.terms, queryTerm{id: id, idf: IDF(docs, df)})
	}
	if len(q.terms) == 0 || docs == 0 {
		return nil, nil, nil
	}
	avgdl := float64(terms) / float64(docs)
	top, err := sr.run(ctx, q, outer, segs, avgdl, tie)
	if err != nil {
		return nil, nil, err
	}
	outerHits = top.sorted()
	if top.inner != nil {
		innerHits = top.inner.top.sorted()
	}
	return outerHits, innerHits, nil
}

// A Searcher runs queries over segments: it holds the thresholds that
// choose the scoring paths, a pool of query buffers and the last norm
// table. It is safe for concurrent use; its zero value has no Tuning (see
// DefaultTuning).
type Searcher struct {
	Tuning  Tuning
	scratch sync.Pool                   // of *scratch, queries' buffers
	norms   atomic.Pointer[cachedNorms] // the last query's norm table
}

// run scores the query over segs, whose average document length is avgdl: the
// best k documents that f accepts, with distinct texts, equal scores in tie's
// order, in the heap it returns (with q.inner's in its inner heap).
func (sr *Searcher) run(ctx context.Context, q *query, f Filter, segs []*Segment, avgdl float64, tie TieOrder) (*topK, error) {
	q.norms = sr.normsFor(avgdl)
	q.scratch = sr.getScratch()
	q.best = slices.Grow(q.scratch.bestBuf[:0], len(q.terms))[:len(q.terms)]
	q.scratch.bestBuf = q.best
	defer sr.putScratch(q.scratch)
	// Every segment's cursors first: the size of their postings decides
	// whether the segments are searched in two halves side by side. They
	// go into one slice, with room for them all (a term has two lists at
	// most in a segment), so that each segment's stay where they are.
	work := q.work[:0]
	all := slices.Grow(q.cursors[:0], 2*len(q.terms)*len(segs))
	size := 0
	for n, s := range segs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		w := segmentWork{s: segRef{s, n}}
		from := len(all)
		var buf [2]list
		scale := ImpactScale(avgdl, s.refAvgdl)
		for qi, t := range q.terms {
			i := s.termIndex(t.id)
			if i < 0 {
				continue
			}
			// A split term is two cursors with one place in the query: a
			// document is in one of its lists only.
			ls := s.lists(i, &buf)
			for _, l := range ls {
				c := termCursor{it: l.it, idf: t.idf, qi: qi, dense: l.dense, maxTF: l.maxTF, scale: scale, dls: l.dls}
				c.ub = ScoreBound(t.idf, l.maxImpact, scale)
				// Not yet at its first document: most cursors never walk (the
				// steps below start their own iterators, or leave them out),
				// and decoding one posting of each list costs a cache miss.
				all = append(all, c)
				w.size += len(l.it.p)
			}
		}
		if len(all) > from {
			w.cursors = all[from:len(all):len(all)]
			work = append(work, w)
			size += w.size
		}
	}
	q.work, q.cursors = work, all
	if size < sr.Tuning.ParallelMin || len(work) < 2 || len(q.terms) < 2 {
		top := q.newTop(tie)
		if err := sr.search(ctx, q, f, work, avgdl, top); err != nil {
			return nil, err
		}
		return top, nil
	}
	// A query of several terms with many postings (one term alone is
	// walked fast enough, its blocks skipped): two halves of the segments,
	// as even in size as they come, searched side by side. Each half keeps
	// its own best k, and prunes with the higher of the two thresholds:
	// each half's k-th best is a floor for the whole query's k-th best, so
	// a document below either cannot enter. The halves' best are merged at the
	// end.
	var halves [2][]segmentWork
	var sizes [2]int
	for _, w := range work {
		h := 0
		if sizes[1] < sizes[0] {
			h = 1
		}
		halves[h], sizes[h] = append(halves[h], w), sizes[h]+w.size
	}
	tops := [2]*topK{q.newTop(tie), q.newTop(tie)}
	tops[0].shared = newSharedBound()
	tops[1].shared = tops[0].shared
	if q.inner != nil {
		tops[0].inner.top.shared = newSharedBound()
		tops[1].inner.top.shared = tops[0].inner.top.shared
	}
	other := q.fork(sr.getScratch())
	defer sr.putScratch(other.scratch)
	var otherErr error
	var otherPanic any
	done := make(chan struct{})
	// The segments may be mapped, and the caller may catch a fault on
	// them (runtime/debug.SetPanicOnFault, which is a goroutine's): the
	// second half runs with the caller's setting, and a panic of it is
	// carried to the caller, after the first half ends either way (its
	// scratch is the pool's only once both are done).
	onFault := debug.SetPanicOnFault(false)
	debug.SetPanicOnFault(onFault)
	go func() {
		defer close(done)
		defer func() { otherPanic = recover() }()
		debug.SetPanicOnFault(onFault)
		otherErr = sr.search(ctx, other, f, halves[1], avgdl, tops[1])
	}()
	err := func() error {
		defer func() { <-done }()
		return sr.search(ctx, q, f, halves[0], avgdl, tops[0])
	}()
	if otherPanic != nil {
		panic(otherPanic)
	}
	if err = cmp.Or(err, otherErr); err != nil {
		return nil, err
	}
	for _, h := range tops[1].h.hits {
		tops[0].keep(h)
	}
	if q.inner != nil {
		for _, h := range tops[1].inner.top.h.hits {
			tops[0].inner.top.keep(h)
		}
	}
	return tops[0], nil
}

// newTop returns the query's heap: with an inner heap for q.inner, when
// set.
func (q *query) newTop(tie TieOrder) *topK {
	t := newTopK(q.k, tie, q.groups, q.docs)
	if q.inner != nil {
		t.inner = &innerTopK{top: newTopK(q.k, tie, q.groups, q.docs), f: q.inner}
	}
	return t
}

// byReach returns work ordered by reach, highest first, equal reaches in
// work's order (a stable sort's). The order is found on a slice of reaches
// and places, and work copied in that order into the query's buffer:
// sorting the segments' work itself moved its wide values at every step of
// the stable sort's merges (8% of a common word's query, issue 33).
func (q *query) byReach(work []segmentWork) []segmentWork {
	order := slices.Grow(q.reachOrder[:0], len(work))[:len(work)]
	for i := range work {
		work[i].reach = q.reach(work[i].cursors, nil)
		order[i] = placedReach{reach: work[i].reach, at: i}
	}
	slices.SortFunc(order, func(a, b placedReach) int {
		if c := cmp.Compare(b.reach, a.reach); c != 0 {
			return c
		}
		return cmp.Compare(a.at, b.at)
	})
	sorted := slices.Grow(q.sortedWork[:0], len(work))[:len(work)]
	for i, o := range order {
		sorted[i] = work[o.at]
	}
	q.reachOrder, q.sortedWork = order, sorted
	return sorted
}

// placedReach is a segment's reach and its place in a query's work.
type placedReach struct {
	reach float64
	at    int
}

// segmentWork is a segment and its query terms' cursors.
type segmentWork struct {
	s       segRef
	cursors []termCursor
	size    int     // postings bytes
	reach   float64 // the most a document can score in it
}

// fork returns a copy of the query for another goroutine: the same terms
// and tables (read only), scratch buffers of its own (sc).
func (q *query) fork(sc *scratch) *query {
	c := &query{norms: q.norms, terms: q.terms, part: q.part, k: q.k, groups: q.groups, docs: q.docs, inner: q.inner, scratch: sc}
	c.best = slices.Grow(sc.bestBuf[:0], len(q.terms))[:len(q.terms)]
	sc.bestBuf = c.best
	return c
}

// search scores the query over the segments of work into top.
func (sr *Searcher) search(ctx context.Context, q *query, f Filter, work []segmentWork, avgdl float64, top *topK) error {
	// First every segment's rarest term, then its next rarest, and so on
	// while terms are rare, their documents scored whole: the threshold they set
	// prunes the frequent terms in every segment, the first ones included.
	// Then the frequent terms' best blocks, then MaxScore on the rest.
	// The segments that can score highest first: a segment scored outright
	// (exhaustive) is scored as it is met, and the threshold its best set
	// spares the documents of the next ones (and sends them to the pairs
	// path sooner).
	work = q.byReach(work)
	segs := q.pending[:0]
	for _, w := range work {
		if err := ctx.Err(); err != nil {
			return err
		}
		if p, ok := sr.startSegment(w.s, w.cursors, avgdl, q, f, top); ok {
			segs = append(segs, p)
		}
	}
	// Their done flags and the lists left for MaxScore, in two buffers.
	n := 0
	for i := range segs {
		n += len(segs[i].all)
	}
	done := slices.Grow(q.done[:0], n)[:n]
	clear(done)
	rest := slices.Grow(q.rest[:0], n)[:0]
	n = 0
	for i := range segs {
		segs[i].done = done[n : n+len(segs[i].all) : n+len(segs[i].all)]
		n += len(segs[i].all)
	}
	// The segments whose rarest list can score highest first: the
	// threshold rises sooner, and prunes more of the rest.
	slices.SortStableFunc(segs, func(a, b pendingSegment) int { return cmp.Compare(b.all[0].ub, a.all[0].ub) })
	for round := 0; round < len(q.terms); round++ {
		for i := range segs {
			sr.prefillRound(&segs[i], round, avgdl, q, f, top)
		}
	}
	later := segs[:0] // in place: a segment is moved down, never up
	for _, p := range segs {
		from := len(rest)
		for i := range p.all {
			if !p.done[i] {
				rest = append(rest, p.all[i])
			}
		}
		if len(rest) > from {
			p.rest = rest[from:len(rest):len(rest)]
			later = append(later, p)
		}
	}
	q.pending, q.done, q.rest = segs, done, rest
	sr.champions(later, avgdl, q, f, top)
	for _, p := range later {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := range p.rest {
			p.rest[i].it.next() // a segment's lists hold a posting at least
		}
		sr.maxScore(p.s, p.rest, avgdl, q, f, top)
	}
	return nil
}
