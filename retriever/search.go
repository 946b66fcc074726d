package retriever

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strings"
	"sync/atomic"

	"go.uber.org/zap"
)

// Search refreshes, then answers a request (spec §5, §6).
func (ix *Index) Search(ctx context.Context, req Request) (Result, error) {
	if err := req.Validate(); err != nil {
		return Result{}, err
	}
	return ix.fresh(ctx, func() (Result, error) { return ix.searchIndexed(ctx, req) })
}

// fresh returns answer's result after the index was brought up to date with
// every change made before the call (Refresh). With a healthy watcher, the
// wait for the watcher's events and the answer run side by side: when the
// update then commits nothing, the index the answer read is the index after
// the update, so its result is the one to return; otherwise the answer is
// made again.
func (ix *Index) fresh(ctx context.Context, answer func() (Result, error)) (Result, error) {
	if ix.fw.currentBarrier() == nil {
		if _, err := ix.Refresh(ctx, nil); err != nil {
			return Result{}, err
		}
		return answer()
	}
	type answered struct {
		res Result
		err error
	}
	before := ix.commits.Load()
	early := make(chan answered, 1)
	go func() {
		res, err := answer()
		early <- answered{res, err}
	}()
	_, err := ix.Refresh(ctx, nil)
	a := <-early
	if err != nil {
		return Result{}, err
	}
	if a.err == nil && ix.commits.Load() == before {
		return a.res, nil
	}
	return answer()
}

// searchIndexed answers a valid request from what is indexed now.
func (ix *Index) searchIndexed(ctx context.Context, req Request) (Result, error) {
	return ix.answer(ctx, req)
}

// newFilter makes the evidence rules of a valid request.
func (ix *Index) newFilter(req Request) *filter {
	f := &filter{scopeEpisode: req.Scope == "episode", records: req.Episode != "" && req.Conversation != ""}
	if req.Episode != "" {
		f.episode, _ = EpisodeNumber(req.Episode)
	}
	if f.records {
		f.conv, f.hasConv = ix.lookupConv(req.Conversation)
		f.dash, _ = ix.lookupConv("-")
		f.allConvs = req.AllConversations
	}
	if ix.interpreter != nil && req.TurnMessage != "" {
		f.turnHash, f.hasTurn = maphash.String(ix.seed, strings.TrimSpace(req.TurnMessage)), true
	}
	return f
}

// rank answers a query from one committed state: its statistics, postings and
// files are read under one read lock, so no update is seen in part. The
// pieces' text is read from the files after the lock is released.
func (ix *Index) rank(ctx context.Context, text, agent string, k int, f *filter) (Result, error) {
	ix.mu.RLock()
	q, err := ix.newQuery(text, agent)
	if err != nil {
		ix.mu.RUnlock()
		return Result{}, err
	}
	q.k = k
	hits, err := ix.run(ctx, q, f)
	agents := make([]string, len(hits))
	for i, h := range hits {
		agents[i] = ix.agents[h.fs.agent]
	}
	ix.mu.RUnlock()
	if err != nil {
		return Result{}, err
	}
	return ix.items(hits, agents), nil
}

// Symbols ranks query against every indexed piece of every agent and episode
// with no episode or conversation filter (spec §9 workspace/symbol); at most
// limit items (0: DefaultSymbolLimit).
func (ix *Index) Symbols(ctx context.Context, query string, limit int) (Result, error) {
	if limit <= 0 {
		limit = DefaultSymbolLimit
	}
	return ix.fresh(ctx, func() (Result, error) { return ix.rank(ctx, query, "", limit, &filter{all: true}) })
}

// filter is the evidence rules of a request (spec §5).
type filter struct {
	all          bool   // workspace symbols: every indexed piece
	episode      string // current episode number, "" for none
	scopeEpisode bool
	records      bool // record files are evidence (episode and conversation given)
	conv, dash   uint32
	hasConv      bool
	allConvs     bool // every conversation of the current episode
	turnHash     uint64
	hasTurn      bool
}

type query struct {
	norms *normTable
	terms []queryTerm
	agent int // -1: every agent
	k     int
	best  []float64 // scratch for reach, by query term
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
	candDLs             []uint16 // the lengths of cands
	seen                []uint64 // exhaustivePairs' bit per piece, clear between uses
	cursors             []termCursor
	work                []segmentWork
	pf                  prefillScratch
	pending             []pendingSegment // search's
	done                []bool
	rest                []termCursor
	cum, contrib        []float64 // maxScore's
}

// prefillScratch is prefill's buffers.
type prefillScratch struct {
	others              []termCursor
	order, groups, byUB []int
	gub, contrib, bound []float64
	gdense              []*denseTerm
}

// getScratch takes buffers from the pool; putScratch gives them back.
func (ix *Index) getScratch() *scratch {
	if s, ok := ix.scratch.Get().(*scratch); ok {
		return s
	}
	return &scratch{}
}

func (ix *Index) putScratch(s *scratch) {
	// The segments the cursors point into may be dropped: let them go.
	clear(s.cursors[:cap(s.cursors)])
	clear(s.work[:cap(s.work)])
	clear(s.pf.others[:cap(s.pf.others)])
	clear(s.pending[:cap(s.pending)])
	clear(s.rest[:cap(s.rest)])
	clear(s.pf.gdense[:cap(s.pf.gdense)])
	s.cursors, s.work = s.cursors[:0], s.work[:0]
	ix.scratch.Put(s)
}

// normsFor returns the length norms at avgdl: the last query's when the
// average is the same (it changes only as the index does).
func (ix *Index) normsFor(avgdl float64) *normTable {
	if c := ix.norms.Load(); c != nil && c.avgdl == avgdl {
		return c.table
	}
	c := &cachedNorms{avgdl: avgdl, table: newNormTable(avgdl)}
	ix.norms.Store(c)
	return c.table
}

// cachedNorms is a norm table and the average length it is for.
type cachedNorms struct {
	avgdl float64
	table *normTable
}

// reach is the most a piece can score from the cursors that use allows: the
// sum, over query terms, of the largest bound of the term's cursors. A split
// term's lists hold distinct pieces, so a piece gets one of their parts, not
// both.
func (q *query) reach(cs []termCursor, use func(i int) bool) float64 {
	clear(q.best)
	for i := range cs {
		if use == nil || use(i) {
			q.best[cs[i].qi] = max(q.best[cs[i].qi], cs[i].ub)
		}
	}
	return sumInOrder(q.best)
}

type queryTerm struct {
	id  uint32
	idf float64
}

// newQuery looks up the terms of text and their statistics over the agents
// searched (spec §6). The caller holds the read lock.
func (ix *Index) newQuery(text, agent string) (*query, error) {
	names := queryTerms(text)
	if len(names) > MaxQueryTerms {
		return nil, &FieldError{"query", fmt.Sprintf("%d terms", len(names)), fmt.Sprintf("at most %d distinct terms", MaxQueryTerms)}
	}
	q := &query{agent: -1}
	ix.dictMu.RLock()
	ids := make([]uint32, 0, len(names))
	for _, n := range names {
		if id, ok := ix.dict[n]; ok {
			ids = append(ids, id)
		}
	}
	ix.dictMu.RUnlock()
	if agent != "" {
		a, ok := ix.agentIDs[agent]
		if !ok {
			return q, nil
		}
		q.agent = int(a)
	}
	var docs int64
	for a := range ix.stats {
		if q.agent < 0 || q.agent == a {
			docs += ix.stats[a].docs
		}
	}
	for _, id := range ids {
		var df int64
		for a := range ix.stats {
			if (q.agent < 0 || q.agent == a) && int(id) < len(ix.stats[a].df) {
				df += int64(ix.stats[a].df[id])
			}
		}
		if df == 0 {
			continue
		}
		q.terms = append(q.terms, queryTerm{id: id, idf: idf(docs, df)})
	}
	return q, nil
}

// idf is Lucene's: ln(1 + (N - n + 0.5) / (n + 0.5)).
func idf(n, df int64) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// bm25 is the classic term score, with the constant factor k1+1 kept.
func bm25(idf float64, tf, dl uint32, avgdl float64) float64 {
	return bm25n(idf, tf, lengthNorm(dl, avgdl))
}

// lengthNorm is bm25's k1·(1 − b + b·|d|/avgdl), which depends on the piece only.
func lengthNorm(dl uint32, avgdl float64) float64 {
	return K1 * (1 - B + B*float64(dl)/avgdl)
}

// bm25n is bm25 with the piece's lengthNorm given: the same operations in
// the same order, so the same score to the last bit.
func bm25n(idf float64, tf uint32, norm float64) float64 {
	t := float64(tf)
	return idf * t * (K1 + 1) / (t + norm)
}

// normTable holds lengthNorm for the short pieces (nearly all), so that
// scoring a posting costs one division.
type normTable [1024]float64

func newNormTable(avgdl float64) *normTable {
	var t normTable
	for dl := range t {
		t[dl] = lengthNorm(uint32(dl), avgdl)
	}
	return &t
}

func (t *normTable) of(dl uint16, avgdl float64) float64 {
	if int(dl) < len(t) {
		return t[dl]
	}
	return lengthNorm(uint32(dl), avgdl)
}

// scoreBound bounds the term's score in any piece whose impact (at the
// segment's refAvgdl) is at most maxImpact; scale is impactScale's. The
// bound is exact for the piece of largest impact when the index's average
// piece length is the segment's.
func scoreBound(idf float64, maxImpact float32, scale float64) float64 {
	return idf * (K1 + 1) * float64(maxImpact) * scale
}

// impactScale makes impacts taken at ref bound scores at avgdl. With
// n = k1(1-b) + k1·b·dl/avg, the score is idf(k1+1)·tf/(tf+n). When avgdl ≥
// ref, tf + n(avgdl) ≥ (ref/avgdl)·(tf + n(ref)), so the score is at most
// avgdl/ref times the impact's; when avgdl < ref, n grows and the score is
// at most the impact's.
func impactScale(avgdl, ref float64) float64 {
	return max(1, avgdl/ref)
}

// sumInOrder adds a piece's term scores in query term order: every path that
// scores a piece adds the same numbers in the same order, so equal pieces get
// equal scores to the last bit whichever path found them.
func sumInOrder(contrib []float64) float64 {
	score := 0.0
	for _, v := range contrib {
		score += v
	}
	return score
}

// hit is a scored piece.
type hit struct {
	score float64
	seg   *segment
	doc   uint32
	fs    *fileState
}

// run scores the query over every segment, keeps the best k pieces with
// distinct texts, and reads their text.
func (ix *Index) run(ctx context.Context, q *query, f *filter) ([]hit, error) {
	var docs, terms int64
	for a := range ix.stats {
		if q.agent < 0 || q.agent == a {
			docs += ix.stats[a].docs
			terms += ix.stats[a].terms
		}
	}
	if len(q.terms) == 0 || docs == 0 {
		return nil, nil
	}
	avgdl := float64(terms) / float64(docs)
	q.norms = ix.normsFor(avgdl)
	q.best = make([]float64, len(q.terms))
	q.scratch = ix.getScratch()
	defer ix.putScratch(q.scratch)
	// Every segment's cursors first: the size of their postings decides
	// whether the segments are searched in two halves side by side. They
	// go into one slice, with room for them all (a term has two lists at
	// most in a segment), so that each segment's stay where they are.
	work := q.work[:0]
	all := slices.Grow(q.cursors[:0], 2*len(q.terms)*len(ix.segments))
	size := 0
	for _, s := range ix.segments {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		w := segmentWork{s: s}
		from := len(all)
		var buf [2]list
		scale := impactScale(avgdl, s.refAvgdl)
		for qi, t := range q.terms {
			i := s.termIndex(t.id)
			if i < 0 {
				continue
			}
			// A split term is two cursors with one place in the query: a
			// piece is in one of its lists only.
			ls := s.lists(i, &buf)
			for _, l := range ls {
				c := termCursor{it: l.it, idf: t.idf, qi: qi, dense: l.dense, maxTF: l.maxTF, scale: scale, dls: l.dls}
				c.ub = scoreBound(t.idf, l.maxImpact, scale)
				// Not yet at its first piece: most cursors never walk (the
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
	if size < ix.tune.parallelMin || len(work) < 2 || len(q.terms) < 2 {
		top := newTopK(q.k)
		if err := ix.search(ctx, q, f, work, avgdl, top); err != nil {
			return nil, err
		}
		return top.sorted(), nil
	}
	// A query of several terms with many postings (one term alone is
	// walked fast enough, its blocks skipped): two halves of the segments,
	// as even in size as they come, searched side by side. Each half keeps
	// its own best k, and prunes with the higher of the two thresholds:
	// each half's k-th best is a floor for the whole query's k-th best, so
	// a piece below either cannot enter. The halves' best are merged at the
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
	shared := newSharedBound()
	tops := [2]*topK{newTopK(q.k), newTopK(q.k)}
	tops[0].shared, tops[1].shared = shared, shared
	other := q.fork(ix.getScratch())
	defer ix.putScratch(other.scratch)
	var otherErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		otherErr = ix.search(ctx, other, f, halves[1], avgdl, tops[1])
	}()
	err := ix.search(ctx, q, f, halves[0], avgdl, tops[0])
	<-done
	if err = cmp.Or(err, otherErr); err != nil {
		return nil, err
	}
	for _, h := range tops[1].h.hits {
		tops[0].offer(h)
	}
	return tops[0].sorted(), nil
}

// segmentWork is a segment and its query terms' cursors.
type segmentWork struct {
	s       *segment
	cursors []termCursor
	size    int // postings bytes
}

// fork returns a copy of the query for another goroutine: the same terms
// and tables (read only), scratch buffers of its own (sc).
func (q *query) fork(sc *scratch) *query {
	c := &query{norms: q.norms, terms: q.terms, agent: q.agent, k: q.k, scratch: sc}
	c.best = make([]float64, len(q.terms))
	return c
}

// search scores the query over the segments of work into top.
func (ix *Index) search(ctx context.Context, q *query, f *filter, work []segmentWork, avgdl float64, top *topK) error {
	// First every segment's rarest term, then its next rarest, and so on
	// while terms are rare, their pieces scored whole: the threshold they set
	// prunes the frequent terms in every segment, the first ones included.
	// Then the frequent terms' best blocks, then MaxScore on the rest.
	segs := q.pending[:0]
	for _, w := range work {
		if err := ctx.Err(); err != nil {
			return err
		}
		if p, ok := ix.startSegment(w.s, w.cursors, avgdl, q, f, top); ok {
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
			ix.prefillRound(&segs[i], round, avgdl, q, f, top)
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
	ix.champions(later, avgdl, q, f, top)
	for _, p := range later {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := range p.rest {
			p.rest[i].it.next() // a segment's lists hold a posting at least
		}
		ix.maxScore(p.s, p.rest, avgdl, q, f, top)
	}
	return nil
}

// pendingSegment is a segment on its way through the steps of run.
type pendingSegment struct {
	s      *segment
	all    []termCursor // every query term in the segment, rarest first
	done   []bool       // terms whose pieces were all offered
	budget int          // postings bytes prefill may still walk
	rest   []termCursor // the terms left for MaxScore
}

// championBlocks is how many of a frequent term's best blocks (by their
// score bound, over all segments) are scored whole before MaxScore.
const championBlocks = 2

// champions scores, in full, the pieces of each frequent term's best blocks:
// they hold its best pieces, so the threshold is near its final value
// before MaxScore walks anything, and MaxScore skips the blocks (and terms)
// that cannot reach it. Pieces are offered again later; that changes nothing.
func (ix *Index) champions(later []pendingSegment, avgdl float64, q *query, f *filter, top *topK) {
	type block struct {
		bound float64
		p, c  int // segment in later, cursor in rest
		b     int // block; -1: the whole list (no skips)
	}
	contrib := make([]float64, len(q.terms))
	var others []termCursor
	for qi := range q.terms {
		// The best few blocks, kept while scanning: a frequent term has
		// thousands of them, and most queries need none (the threshold is
		// already out of the terms' reach).
		var best [championBlocks]block
		n := 0
		keep := func(bl block) {
			if n < championBlocks {
				best[n] = bl
				n++
			} else if bl.bound > best[n-1].bound {
				best[n-1] = bl
			} else {
				return
			}
			for k := n - 1; k > 0 && best[k].bound > best[k-1].bound; k-- {
				best[k], best[k-1] = best[k-1], best[k]
			}
		}
		theta := top.threshold() * (1 - pruneSlack)
		for p, ps := range later {
			if q.reach(ps.rest, nil) < theta { // no piece of the segment can enter
				continue
			}
			for c := range ps.rest {
				cur := &ps.rest[c]
				if cur.qi != qi {
					continue
				}
				if len(cur.it.skips) == 0 {
					keep(block{cur.ub, p, c, -1})
				}
				for b, e := range cur.it.skips {
					if bound := scoreBound(cur.idf, e.maxImpact, cur.scale); n < championBlocks || bound > best[n-1].bound {
						keep(block{bound, p, c, b})
					}
				}
			}
		}
		for _, bl := range best[:n] {
			if bl.bound < top.threshold()*(1-pruneSlack) {
				break
			}
			ps := later[bl.p]
			cur := ps.rest[bl.c]
			it := cur.it
			it.valid, it.pos, it.last, it.si = false, 0, ^uint32(0), 0
			end := len(it.p)
			if bl.b >= 0 {
				if bl.b > 0 {
					prev := it.skips[bl.b-1]
					it.pos, it.last, it.si = int(prev.end), prev.lastDoc, bl.b
				}
				end = int(it.skips[bl.b].end)
			}
			// The block's pieces come in increasing order: one fresh
			// iterator per other list looks them all up.
			others = others[:0]
			for _, c := range ps.all {
				if c.qi != cur.qi {
					c.it.valid, c.it.pos, c.it.last, c.it.si = false, 0, ^uint32(0), 0
					others = append(others, c)
				}
			}
			k := max(bl.b, 0) * skipEvery // the block's first place in its list
			for ; it.pos < end && it.next(); k++ {
				dl := ps.s.lengthAt(cur.dls, k, it.doc)
				ix.scoreWhole(ps.s, &cur, it.tf, dl, others, it.doc, avgdl, q, f, top, contrib)
			}
		}
	}
}

// tuning holds the thresholds that choose between ways of indexing and
// searching that give the same answers; tests vary them so that every way
// is checked against scoring every posting.
type tuning struct {
	// layerMin is the fewest postings a term must have in a batch to be
	// split into high and low lists.
	layerMin int
	// exhaustiveMax is the most postings bytes the query's terms may have
	// in a segment to be scored every posting: for rare terms of about the
	// same frequency a tight loop over all their postings beats any pruning.
	exhaustiveMax int
	// exhaustiveSpread is how many times the rarest term's postings the
	// most frequent one's may hold for them to be alike.
	exhaustiveSpread int
	// prefillMax is the most postings bytes a list may have in a segment to
	// be prefilled: rare enough that scoring each of its pieces whole is cheap.
	prefillMax int
	// parallelMin is the fewest postings bytes a query's terms must have
	// over all segments for the segments to be searched in two halves side
	// by side: below it, a second goroutine costs more than it saves.
	parallelMin int
}

func defaultTuning() tuning {
	return tuning{layerMin: defaultLayerMin, exhaustiveMax: 1 << 14, exhaustiveSpread: 8, prefillMax: 1 << 13, parallelMin: 1 << 17}
}

// scoreWhole scores piece d, of length dl, found with tf in the list of c, with every
// other query term of its segment (looked up in others, which are asked
// for pieces in increasing order) and offers it.
func (ix *Index) scoreWhole(s *segment, c *termCursor, tf uint32, dl uint16, others []termCursor, d uint32, avgdl float64, q *query, f *filter, top *topK, contrib []float64) {
	ok, fs := ix.candidate(s, d, q, f)
	if !ok {
		return
	}
	clear(contrib)
	norm := q.norms.of(dl, avgdl)
	contrib[c.qi] = bm25n(c.idf, tf, norm)
	for i := range others {
		o := &others[i]
		if contrib[o.qi] != 0 {
			continue // found in the term's other list
		}
		if tf := o.lookup(d); tf > 0 {
			contrib[o.qi] = bm25n(o.idf, tf, norm)
		}
	}
	top.offer(hit{score: sumInOrder(contrib), seg: s, doc: d, fs: fs})
}

// termCursor walks one query term's postings in a segment.
type termCursor struct {
	it  postingIter
	idf float64
	ub  float64 // the most this term can add to a piece's score
	qi  int     // the term's place in the query
	// maxTF is the term's largest tf in the segment: with a piece's length
	// it bounds the term's score in that piece
	maxTF uint16
	// dense, for a frequent term, looks it up in a piece without decoding
	dense *denseTerm
	scale float64 // impactScale of the segment
	dls   []uint8 // a high list's lengths (see layers)
}

// blocks is how many blocks the cursor's list has: its skips' (one block
// when it has none).
func (c *termCursor) blocks() int { return max(len(c.it.skips), 1) }

// block returns the byte range of the list's si-th block, the piece before
// it, and the bound of the term's score in its pieces.
func (c *termCursor) block(si int) (from, end int, prev uint32, ub float64) {
	from, end, prev, ub = 0, len(c.it.p), ^uint32(0), c.ub
	if si < len(c.it.skips) {
		blk := c.it.skips[si]
		end, ub = int(blk.end), scoreBound(c.idf, blk.maxImpact, c.scale)
	}
	if si > 0 {
		from, prev = int(c.it.skips[si-1].end), c.it.skips[si-1].lastDoc
	}
	return from, end, prev, ub
}

// lookup returns the cursor's term's tf in piece d (0: not in it), for pieces
// asked in increasing order.
func (c *termCursor) lookup(d uint32) uint32 {
	if c.dense != nil {
		return c.dense.tf(d)
	}
	if c.it.advance(d) && c.it.doc == d {
		return c.it.tf
	}
	return 0
}

// pruneSlack keeps pruning safe from rounding: sums of the same terms added
// in another order may differ in their last bits, and a piece that ties the
// threshold can still enter by location order.
const pruneSlack = 1e-9

// startSegment scores a segment outright when all its query terms are rare
// and alike (every posting), else readies it for the rounds of prefill: its
// terms rarest first.
func (ix *Index) startSegment(s *segment, cs []termCursor, avgdl float64, q *query, f *filter, top *topK) (pendingSegment, bool) {
	if len(cs) == 0 || len(s.fileRuns) == 0 {
		return pendingSegment{}, false
	}
	// Every posting when the terms are few and alike; with a much more
	// frequent term beside a rare one, the rare one's pieces set a threshold
	// that spares walking the frequent one. A term's size is its lists'
	// together; a query of one term is never scored so, as its high list
	// (when split) spares walking its low one.
	clear(q.best)
	for i := range cs {
		q.best[cs[i].qi] += float64(len(cs[i].it.p))
	}
	total, least, most, terms := 0, math.MaxInt, 0, 0
	for _, v := range q.best {
		if n := int(v); n > 0 {
			total, least, most, terms = total+n, min(least, n), max(most, n), terms+1
		}
	}
	if terms > 1 && total <= ix.tune.exhaustiveMax && most <= ix.tune.exhaustiveSpread*least {
		ix.exhaustive(s, cs, avgdl, q, f, top)
		return pendingSegment{}, false
	}
	// Rarest first; of a split term, the high list (the shorter) first.
	slices.SortFunc(cs, func(a, b termCursor) int {
		return cmp.Or(cmp.Compare(b.idf, a.idf), cmp.Compare(len(a.it.p), len(b.it.p)))
	})
	return pendingSegment{s: s, all: cs, budget: 2 * ix.tune.prefillMax}, true
}

// prefillRound scores whole the pieces of the segment's round-th rarest term,
// when it is rare and its pieces can still reach the threshold. The later
// steps leave the term out: a piece that has it was offered with its full
// score already, and offered again without that term's part it scores lower,
// so it changes nothing (a lower score never displaces the same piece, nor
// passes a threshold that its full score did not). The same holds within the
// prefill of the next terms, which leave the done ones out too.
func (ix *Index) prefillRound(p *pendingSegment, round int, avgdl float64, q *query, f *filter, top *topK) {
	cs := p.all
	if round >= len(cs) || len(cs) == 1 {
		return
	}
	n := len(cs[round].it.p)
	if n > ix.tune.prefillMax || n > p.budget {
		return
	}
	// the most a piece without a done term can score
	reach := q.reach(cs, func(i int) bool { return !p.done[i] })
	p.done[round] = true
	if reach < top.threshold()*(1-pruneSlack) {
		return // none of the term's pieces can enter
	}
	p.budget -= n
	ix.prefill(p.s, cs, round, p.done, avgdl, q, f, top)
}

// maxScore finds the segment's pieces that can enter the top k, document at
// a time: terms whose bounds together cannot reach the threshold are not
// walked, only looked up for pieces the other terms find.
func (ix *Index) maxScore(s *segment, cs []termCursor, avgdl float64, q *query, f *filter, top *topK) {
	switch len(cs) {
	case 0:
		return
	case 1:
		ix.single(s, &cs[0], avgdl, q, f, top)
		return
	}
	slices.SortFunc(cs, func(a, b termCursor) int { return cmp.Compare(a.ub, b.ub) })
	runs := newRunCursor(ix, s, q, f)
	cum := slices.Grow(q.cum[:0], len(cs))[:len(cs)]
	q.cum = cum
	// A score is summed in query term order, whatever order the cursors are
	// in, so that equal pieces get equal scores to the last bit.
	contrib := slices.Grow(q.contrib[:0], len(q.terms))[:len(q.terms)]
	q.contrib = contrib
	// cum[i] bounds what cursors 0..i add to a piece: of a split term's two
	// lists only the larger bound counts, as a piece is in one of them.
	clear(q.best)
	sum := 0.0
	for i, c := range cs {
		sum += max(c.ub-q.best[c.qi], 0)
		q.best[c.qi] = max(q.best[c.qi], c.ub)
		cum[i] = sum
	}
	for {
		theta := top.threshold() * (1 - pruneSlack)
		e := 0
		for e < len(cs) && cum[e] < theta {
			e++
		}
		before := 0.0 // the most the non-essential terms can add
		if e > 0 {
			before = cum[e-1]
		}
		if e == len(cs)-1 {
			// One essential term: skip its blocks that cannot reach the threshold.
			c := &cs[e]
			for c.it.valid && c.it.si < len(c.it.skips) {
				blk := c.it.skips[c.it.si]
				if scoreBound(c.idf, blk.maxImpact, c.scale)+before >= theta {
					break
				}
				c.it.advance(blk.lastDoc + 1)
			}
		}
		// The next candidate: the smallest doc of the essential terms.
		d, any := uint32(0), false
		for i := e; i < len(cs); i++ {
			if cs[i].it.valid && (!any || cs[i].it.doc < d) {
				d, any = cs[i].it.doc, true
			}
		}
		if !any {
			return
		}
		if !s.isDead(d) {
			clear(contrib)
			partial := 0.0
			dl := uint32(s.dlOf(d))
			for i := e; i < len(cs); i++ {
				if cs[i].it.valid && cs[i].it.doc == d {
					v := bm25(cs[i].idf, cs[i].it.tf, dl, avgdl)
					contrib[cs[i].qi] = v
					partial += v
				}
			}
			// Filter only pieces that can still enter, then look the other
			// terms up while the piece can still reach the threshold.
			pruned := partial+before < theta
			var fs *fileState
			if !pruned {
				var ok bool
				ok, fs = runs.at(d)
				pruned = !ok
			}
			for j := e - 1; j >= 0 && !pruned; j-- {
				if partial+cum[j] < theta {
					pruned = true
					break
				}
				if contrib[cs[j].qi] != 0 {
					continue // found in the term's other list
				}
				if tf := cs[j].lookup(d); tf > 0 {
					v := bm25(cs[j].idf, tf, dl, avgdl)
					contrib[cs[j].qi] = v
					partial += v
				}
			}
			if !pruned {
				top.offer(hit{score: sumInOrder(contrib), seg: s, doc: d, fs: fs})
			}
		}
		for i := e; i < len(cs); i++ {
			if cs[i].it.valid && cs[i].it.doc == d {
				cs[i].it.next()
			}
		}
	}
}

// exhaustive scores every posting of the query's terms: each term's lists
// are decoded into one array in piece order, then the arrays are merged, so
// that each piece is scored once, its length read in order, and the evidence
// rules follow the runs of files. A piece's score is summed in query term
// order, as on the other paths, to the last bit.
func (ix *Index) exhaustive(s *segment, cs []termCursor, avgdl float64, q *query, f *filter, top *topK) {
	slices.SortFunc(cs, func(a, b termCursor) int { return cmp.Compare(a.qi, b.qi) })
	distinct := 1
	for i := 1; i < len(cs); i++ {
		if cs[i].qi != cs[i-1].qi {
			distinct++
		}
	}
	if distinct > maxMerge {
		// More terms than the merge takes: MaxScore, whose answers are the same.
		for i := range cs {
			cs[i].it.next() // a segment's lists hold a posting at least
		}
		ix.maxScore(s, cs, avgdl, q, f, top)
		return
	}
	theta := top.threshold() * (1 - pruneSlack)
	if pairsOnly(cs, distinct, theta) {
		ix.exhaustivePairs(s, cs, avgdl, q, f, top)
		return
	}
	terms := q.decoded[:0]
	for i := 0; i < len(cs); {
		j := i + 1
		for j < len(cs) && cs[j].qi == cs[i].qi {
			j++
		}
		var t decodedTerm
		if len(terms) < cap(terms) {
			t = terms[:len(terms)+1][len(terms)]
		}
		t.decode(cs[i:j])
		terms = append(terms, t)
		i = j
	}
	q.decoded = terms
	norms := q.norms
	runs := newRunCursor(ix, s, q, f)
	// The merge's state in arrays of its own, which the compiler keeps on
	// the stack, not behind the terms' slices. Each array ends in a sentinel
	// past every piece, so the merge needs no bounds but the sentinel's.
	const end = ^uint32(0)
	m := len(terms)
	var (
		docs, tfs [maxMerge][]uint32
		at        [maxMerge]int
		head      [maxMerge]uint32
		ub, idf   [maxMerge]float64
	)
	for i := range m {
		docs[i], tfs[i], ub[i], idf[i] = terms[i].docs, terms[i].tfs, terms[i].ub, terms[i].idf
		head[i] = docs[i][0]
	}
	for {
		d := head[0]
		for i := 1; i < m; i++ {
			d = min(d, head[i])
		}
		if d == end {
			return
		}
		// The piece's terms' bounds first: most pieces have too few of the
		// terms to reach the threshold, and are left without reading their
		// length.
		bound, has := 0.0, uint(0)
		for i := range m {
			if head[i] == d {
				bound += ub[i]
				has |= 1 << i
			}
		}
		if bound >= theta {
			norm := norms.of(s.dlOf(d), avgdl)
			score := 0.0
			for i := range m {
				if has&(1<<i) != 0 {
					score += bm25n(idf[i], tfs[i][at[i]], norm)
				}
			}
			if score >= theta {
				if ok, fs := runs.at(d); ok {
					top.offer(hit{score: score, seg: s, doc: d, fs: fs})
					theta = top.threshold() * (1 - pruneSlack)
				}
			}
		}
		for i := range m {
			if has&(1<<i) != 0 {
				at[i]++
				head[i] = docs[i][at[i]]
			}
		}
	}
}

// pairsOnly reports whether no term alone can reach theta, so that a piece
// must hold two of the terms at least, and there are few enough terms for
// exhaustivePairs (cs in query term order, distinct terms).
func pairsOnly(cs []termCursor, distinct int, theta float64) bool {
	if distinct < 2 || distinct > maxPairTerms {
		return false
	}
	for i := range cs {
		if cs[i].ub >= theta {
			return false
		}
	}
	return true
}

// maxPairTerms is the most terms exhaustivePairs takes.
const maxPairTerms = 4

// exhaustivePairs is exhaustive when a piece needs two of the terms. Each
// list is decoded on its own (a split term's two are not merged), and a bit
// per piece finds the pieces that a second list holds too: a test and a set
// per posting, each independent of the last, where intersecting sorted
// arrays waits on every comparison. Only those pieces are scored. A piece
// is in one list of its own term at most, so a second sighting is another
// term's.
func (ix *Index) exhaustivePairs(s *segment, cs []termCursor, avgdl float64, q *query, f *filter, top *topK) {
	lists := q.decoded[:0]
	for i := range cs {
		var t decodedTerm
		if len(lists) < cap(lists) {
			t = lists[:len(lists)+1][len(lists)]
		}
		t.docs, t.tfs, t.at, t.idf = t.docs[:0], t.tfs[:0], 0, cs[i].idf
		lists = append(lists, t)
	}
	q.decoded = lists
	total := 0
	for i := range lists {
		lists[i].docs, lists[i].tfs = decodeList(cs[i].it.p, lists[i].docs, lists[i].tfs)
		lists[i].docs, lists[i].tfs = append(lists[i].docs, ^uint32(0)), append(lists[i].tfs, 0)
		total += len(lists[i].docs) - 1
	}
	words := (s.docs() + 63) / 64
	if cap(q.seen) < words {
		q.seen = make([]uint64, words)
	}
	seen := q.seen[:words]
	cands := slices.Grow(q.cands[:0], total)[:total]
	n := 0
	for i := range lists {
		docs := lists[i].docs
		for _, d := range docs[:len(docs)-1] {
			w, bit := d>>6, uint64(1)<<(d&63)
			cands[n] = d
			n += int((seen[w] & bit) >> (d & 63)) // seen before: a candidate
			seen[w] |= bit
		}
	}
	clear(seen)
	cands = cands[:n]
	slices.Sort(cands)
	cands = slices.Compact(cands)
	q.cands = cands
	// The candidates' lengths first, in a loop of independent loads.
	dls := slices.Grow(q.candDLs[:0], len(cands))[:len(cands)]
	for j, d := range cands {
		dls[j] = s.dlOf(d)
	}
	q.candDLs = dls
	runs := newRunCursor(ix, s, q, f)
	theta := top.threshold() * (1 - pruneSlack)
	for j, d := range cands {
		norm := q.norms.of(dls[j], avgdl)
		score := 0.0
		for i := range lists {
			// The candidates are few and ascending: search ahead, do not
			// walk. Lists are in query term order, a term's found in one.
			if tf := lists[i].tfOf(d); tf > 0 {
				score += bm25n(lists[i].idf, tf, norm)
			}
		}
		if score < theta {
			continue
		}
		if ok, fs := runs.at(d); ok {
			top.offer(hit{score: score, seg: s, doc: d, fs: fs})
			theta = top.threshold() * (1 - pruneSlack)
		}
	}
}

// b2i is 1 for true: the compiler makes it a flag, not a branch.
func b2i(b bool) int {
	var n int
	if b {
		n = 1
	}
	return n
}

// maxMerge is the most terms exhaustive merges; a longer query's segment
// goes through MaxScore, which gives the same answers.
const maxMerge = 8

// decodedTerm is one query term's postings in a segment, decoded, in piece
// order and ending in a sentinel doc; its buffers are kept by the query for
// the next segment.
type decodedTerm struct {
	docs, tfs []uint32
	at        int
	idf, ub   float64
	spare     []uint32 // for merging a split term's lists
}

// decode fills the term from its lists (one, or a split term's two).
func (t *decodedTerm) decode(ls []termCursor) {
	t.docs, t.tfs, t.at = t.docs[:0], t.tfs[:0], 0
	t.idf, t.ub = ls[0].idf, 0
	for _, c := range ls {
		t.ub = max(t.ub, c.ub)
		first := len(t.docs)
		t.docs, t.tfs = decodeList(c.it.p, t.docs, t.tfs)
		if first > 0 {
			t.mergeAt(first)
		}
	}
	t.docs, t.tfs = append(t.docs, ^uint32(0)), append(t.tfs, 0)
}

// tfOf returns the term's tf in piece d (0: not in it), for pieces asked in
// increasing order: searched ahead by steps that double (the next piece
// asked is most often a few places on), then halved.
func (t *decodedTerm) tfOf(d uint32) uint32 {
	docs := t.docs[t.at:] // ends in a sentinel past every piece
	hi := 1
	for hi < len(docs) && docs[hi-1] < d {
		hi *= 2
	}
	k, found := slices.BinarySearch(docs[hi/2:min(hi, len(docs))], d)
	t.at += hi/2 + k
	if found {
		return t.tfs[t.at]
	}
	return 0
}

// decodeList appends the docs and tfs of a posting list, in a tight loop.
// Its decoding is advance's, written out again: the compiler does not
// inline a function that decodes a posting, and the call costs a quarter
// more a posting in both loops. Its branches stay: predicted, they let the
// next posting's bytes be read before this one's are decoded, where
// arithmetic in their place makes each posting wait on the last.
func decodeList(p []byte, docs, tfs []uint32) ([]uint32, []uint32) {
	return decodeFrom(p, ^uint32(0), docs, tfs)
}

// decodeFrom is decodeList of a list's bytes from a block on, last being
// the doc before the block.
func decodeFrom(p []byte, last uint32, docs, tfs []uint32) ([]uint32, []uint32) {
	// Room for the most postings p can hold (a byte each), written by index.
	k := len(docs)
	docs, tfs = slices.Grow(docs, len(p))[:k+len(p)], slices.Grow(tfs, len(p))[:k+len(p)]
	for pos := 0; pos < len(p); {
		// Deltas take one byte or, for middling terms, two, nearly always.
		var v uint64
		if b := p[pos]; b < 0x80 {
			v, pos = uint64(b), pos+1
		} else if pos+1 < len(p) && p[pos+1] < 0x80 {
			v, pos = uint64(b&0x7f)|uint64(p[pos+1])<<7, pos+2
		} else {
			v, pos = uvarintAt(p, pos)
		}
		last += uint32(v >> 1)
		tf := uint32(1)
		if v&1 == 0 {
			var t uint64
			if b := p[pos]; b < 0x80 {
				t, pos = uint64(b), pos+1
			} else {
				t, pos = uvarintAt(p, pos)
			}
			tf = uint32(t)
		}
		docs[k], tfs[k] = last, tf
		k++
	}
	return docs[:k], tfs[:k]
}

// mergeAt merges the two runs in piece order that the term's arrays hold,
// split at mid.
func (t *decodedTerm) mergeAt(mid int) {
	n := len(t.docs)
	t.spare = slices.Grow(t.spare[:0], 2*n)[:2*n]
	docs, tfs := t.spare[:n], t.spare[n:]
	i, j, k := 0, mid, 0
	for i < mid && j < n {
		// Without branches: which run gives the next doc is a coin toss.
		takeA := b2i(t.docs[i] < t.docs[j])
		from := j + takeA*(i-j)
		docs[k], tfs[k] = t.docs[from], t.tfs[from]
		i += takeA
		j += 1 - takeA
		k++
	}
	k += copy(docs[k:], t.docs[i:mid])
	copy(tfs[k-(mid-i):], t.tfs[i:mid])
	k2 := copy(docs[k:], t.docs[j:n])
	copy(tfs[k:k+k2], t.tfs[j:n])
	copy(t.docs, docs)
	copy(t.tfs, tfs)
}

// single scores one term's postings in a tight loop, skipping the blocks
// whose bound cannot reach the threshold.
func (ix *Index) single(s *segment, c *termCursor, avgdl float64, q *query, f *filter, top *topK) {
	norms := q.norms
	runs := newRunCursor(ix, s, q, f)
	theta := top.threshold() * (1 - pruneSlack)
	var dls [skipEvery]uint16
	for si := range c.blocks() {
		from, end, prev, ub := c.block(si)
		if ub < theta {
			continue
		}
		// The block whole, then its pieces' lengths in a loop of
		// independent loads (their cache misses overlap), then the scores.
		q.blockDocs, q.blockTFs = decodeFrom(c.it.p[from:end], prev, q.blockDocs[:0], q.blockTFs[:0])
		for j, d := range q.blockDocs {
			dls[j] = s.lengthAt(c.dls, si*skipEvery+j, d)
		}
		for j, d := range q.blockDocs {
			if score := bm25n(c.idf, q.blockTFs[j], norms.of(dls[j], avgdl)); score >= theta {
				if ok, fs := runs.at(d); ok {
					top.offer(hit{score: score, seg: s, doc: d, fs: fs})
					theta = top.threshold() * (1 - pruneSlack)
				}
			}
		}
	}
}

// prefill scores every piece of the list cs[r] in the segment with the
// terms not done (see prefillRound), looked up with fresh iterators as long
// as the piece can still reach the threshold. Blocks of cs[r] that cannot
// reach it with the most the other terms add are skipped.
func (ix *Index) prefill(s *segment, cs []termCursor, r int, done []bool, avgdl float64, q *query, f *filter, top *topK) {
	fresh := func(it postingIter) postingIter {
		it.valid, it.pos, it.last, it.si = false, 0, ^uint32(0), 0
		return it
	}
	// The buffers below are the query's, kept from segment to segment.
	pf := &q.pf
	others := slices.Grow(pf.others[:0], len(cs))[:len(cs)]
	for i := range cs {
		others[i] = cs[i]
		others[i].it = fresh(cs[i].it)
	}
	// The other terms, by query term: the piece is in no other list of its
	// own term, and in at most one list of each other term.
	order := pf.order[:0]   // of cs, the lists looked up, a term's lists together
	groups := pf.groups[:0] // start of each term's lists in order
	for i := range cs {
		if i == r || done[i] || cs[i].qi == cs[r].qi || slices.ContainsFunc(order, func(j int) bool { return cs[j].qi == cs[i].qi }) {
			continue
		}
		groups = append(groups, len(order))
		for j := i; j < len(cs); j++ {
			if j != r && !done[j] && cs[j].qi == cs[i].qi {
				order = append(order, j)
			}
		}
	}
	groups = append(groups, len(order))
	nGroups := len(groups) - 1
	// Look the likeliest to add the most up first.
	gub := slices.Grow(pf.gub[:0], nGroups)[:nGroups]
	gdense := slices.Grow(pf.gdense[:0], nGroups)[:nGroups] // a term's bit set, to tell absence cheaply
	clear(gub)
	for g := range nGroups {
		for _, i := range order[groups[g]:groups[g+1]] {
			gub[g] = max(gub[g], cs[i].ub)
			gdense[g] = cs[i].dense
		}
	}
	byUB := slices.Grow(pf.byUB[:0], nGroups)[:nGroups]
	for g := range byUB {
		byUB[g] = g
	}
	// Terms with bit sets first (a lookup costs a bit test), then by bound.
	slices.SortFunc(byUB, func(a, b int) int {
		sparse := func(g int) int {
			if gdense[g] == nil {
				return 1
			}
			return 0
		}
		return cmp.Or(cmp.Compare(sparse(a), sparse(b)), cmp.Compare(gub[b], gub[a]))
	})
	// byUB begins with the terms that have bit sets
	dense := 0
	for dense < nGroups && gdense[byUB[dense]] != nil {
		dense++
	}
	denseGroups := byUB[:dense]
	contrib := slices.Grow(pf.contrib[:0], len(q.terms))[:len(q.terms)]
	bound := slices.Grow(pf.bound[:0], nGroups)[:nGroups]
	pf.others, pf.order, pf.groups, pf.gub, pf.gdense, pf.byUB, pf.contrib, pf.bound = others, order, groups, gub, gdense, byUB, contrib, bound
	rest := sumInOrder(gub) // the most the other terms add to any piece
	runs := newRunCursor(ix, s, q, f)
	theta := top.threshold() * (1 - pruneSlack)
	idf := cs[r].idf
	// A block of rare at a time: skipped when it cannot reach the
	// threshold with the most the other terms add, else decoded whole, then
	// its pieces whose terms' bounds (without their length) can reach the
	// threshold are kept, then their lengths read in a loop of independent
	// loads (the cache misses overlap, where one at a time each waits for
	// the last), then the rest of the work.
	var batch [skipEvery]struct {
		d, tf, k uint32 // k: the piece's place in rare's list
		dl       uint16
	}
	for si := range cs[r].blocks() {
		from, end, prev, rareUB := cs[r].block(si)
		if rareUB+rest < theta {
			continue
		}
		q.blockDocs, q.blockTFs = decodeFrom(cs[r].it.p[from:end], prev, q.blockDocs[:0], q.blockTFs[:0])
		n := 0
		for j, d := range q.blockDocs {
			// The bounds of the terms the piece may have, those with bit
			// sets looked up. Without branches: whether a piece has a
			// frequent term is a coin toss.
			quick := rareUB + rest
			for _, g := range denseGroups {
				missing := ^gdense[g].bits[d>>6] >> (d & 63) & 1
				quick -= gub[g] * float64(missing)
			}
			batch[n].d, batch[n].tf, batch[n].k = d, q.blockTFs[j], uint32(si*skipEvery+j)
			n += b2i(quick >= theta)
		}
		for j := range batch[:n] {
			batch[j].dl = s.lengthAt(cs[r].dls, int(batch[j].k), batch[j].d)
		}
		for _, b := range batch[:n] {
			d := b.d
			// The most each other term can add to this piece: its largest tf
			// at the piece's own length, far tighter than its bound over all
			// pieces.
			norm := q.norms.of(b.dl, avgdl)
			partial := bm25n(idf, b.tf, norm)
			left := 0.0
			for g := range nGroups {
				var tf uint16
				if t := gdense[g]; t != nil {
					// The largest tf of the window of pieces d is in.
					tf = t.windowMaxTF(d)
				} else {
					for _, i := range order[groups[g]:groups[g+1]] {
						// The largest tf of the block d would be in, read off the skips.
						t := cs[i].maxTF
						if it := &others[i].it; len(it.skips) > 0 {
							it.seek(d)
							if it.si < len(it.skips) {
								t = it.skips[it.si].maxTF
							}
						}
						tf = max(tf, t)
					}
				}
				// A term's lists share its idf: one score for the largest tf.
				bound[g] = bm25n(cs[order[groups[g]]].idf, uint32(tf), norm)
				left += bound[g]
			}
			if partial+left < theta {
				continue
			}
			clear(contrib)
			contrib[cs[r].qi] = partial
			pruned := false
			for _, g := range byUB {
				if partial+left < theta {
					pruned = true
					break
				}
				left -= bound[g]
				for _, i := range order[groups[g]:groups[g+1]] {
					if tf := others[i].lookup(d); tf > 0 {
						v := bm25n(cs[i].idf, tf, norm)
						contrib[cs[i].qi] = v
						partial += v
						break
					}
				}
			}
			// Whether the piece is evidence last: most pieces are, and most
			// fall short of the threshold before.
			score := sumInOrder(contrib)
			if pruned || score < theta {
				continue
			}
			if ok, fs := runs.at(d); ok {
				top.offer(hit{score: score, seg: s, doc: d, fs: fs})
				theta = top.threshold() * (1 - pruneSlack)
			}
		}
	}
}

// candidate reports whether a piece is alive and evidence for the request.
func (ix *Index) candidate(s *segment, d uint32, q *query, f *filter) (bool, *fileState) {
	if s.isDead(d) {
		return false, nil
	}
	fs := ix.file(s.fileOf(d))
	if fs == nil || (q.agent >= 0 && int(fs.agent) != q.agent) || !ix.evidence(f, s, d, fs) {
		return false, nil
	}
	return true, fs
}

// file returns the committed state of a file id, or nil: the pieces of a
// read that was discarded (the file failed half-way) name a file that is not.
func (ix *Index) file(id uint32) *fileState {
	if int(id) < len(ix.byID) {
		return ix.byID[id]
	}
	return nil
}

// Verdicts of the file-level rules on a run of a segment's pieces.
const (
	rejectRun  = iota // no piece of the file is evidence
	acceptRun         // every live piece is
	checkPiece        // the piece-level rules decide
)

// runCursor applies the evidence rules to pieces met in increasing order:
// what depends on the file is decided once a run, not once a piece.
type runCursor struct {
	ix      *Index
	s       *segment
	q       *query
	f       *filter
	i       int // current run
	next    uint32
	fs      *fileState
	verdict int
}

func newRunCursor(ix *Index, s *segment, q *query, f *filter) *runCursor {
	c := &runCursor{ix: ix, s: s, q: q, f: f, i: -1}
	c.enter(0)
	return c
}

func (c *runCursor) enter(i int) {
	c.i = i
	c.next = ^uint32(0)
	if i+1 < len(c.s.fileRuns) {
		c.next = c.s.fileRuns[i+1].lo
	}
	c.fs = c.ix.file(c.s.fileRuns[i].file)
	c.verdict = c.ix.fileVerdict(c.fs, c.q, c.f)
}

// at reports whether piece d (at or after the last one asked) is alive and
// evidence, and its file.
func (c *runCursor) at(d uint32) (bool, *fileState) {
	if d >= c.next {
		i, _ := slices.BinarySearchFunc(c.s.fileRuns, d+1, func(r fileRun, t uint32) int { return cmp.Compare(r.lo, t) })
		c.enter(i - 1)
	}
	switch {
	case c.verdict == rejectRun || c.s.isDead(d):
		return false, nil
	case c.verdict == acceptRun:
		return true, c.fs
	}
	return c.ix.evidence(c.f, c.s, d, c.fs), c.fs
}

// fileVerdict decides what it can of the evidence rules from the file alone.
func (ix *Index) fileVerdict(fs *fileState, q *query, f *filter) int {
	if fs == nil || (q.agent >= 0 && int(fs.agent) != q.agent) {
		return rejectRun
	}
	if f.all {
		return acceptRun
	}
	current := f.episode != "" && fs.epNum == f.episode
	switch {
	case f.scopeEpisode && !current:
		return rejectRun
	case !fs.form.IsRecord():
		return acceptRun
	case !f.records:
		return rejectRun
	case !current && !f.hasTurn:
		return acceptRun
	}
	return checkPiece
}

// evidence applies the request's rules to one piece (spec §5).
func (ix *Index) evidence(f *filter, s *segment, d uint32, fs *fileState) bool {
	if f.all {
		return true
	}
	current := f.episode != "" && fs.epNum == f.episode
	if f.scopeEpisode && !current {
		return false
	}
	if !fs.form.IsRecord() {
		return true
	}
	if !f.records {
		return false
	}
	if current {
		if s.flags[d]&flagUnfielded != 0 {
			if fs.warned.unfielded.CompareAndSwap(false, true) {
				ix.log.Warn("lines without the conversation field in the current episode are not evidence", zap.String("file", fs.rel))
			}
			return false
		}
		c := s.convOf(d)
		if !(f.hasConv && c == f.conv) && c != f.dash && !f.allConvs {
			return false
		}
	}
	if f.hasTurn && s.flags[d]&flagReadingMask == flagOfReading(ReadingTold) && s.toldHash[d] == f.turnHash {
		return false
	}
	return true
}

func (ix *Index) lookupConv(name string) (uint32, bool) {
	ix.convMu.Lock()
	defer ix.convMu.Unlock()
	id, ok := ix.convIDs[name]
	return id, ok
}

// before orders hits: higher score first, then location order (episode
// number, path relative to the run folder byte-wise, line, piece).
func before(a, b *hit) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return locationBefore(a, b)
}

func locationBefore(a, b *hit) bool {
	if c := compareEpisodeNumbers(a.fs.epNum, b.fs.epNum); c != 0 {
		return c < 0
	}
	if a.fs.rel != b.fs.rel {
		return a.fs.rel < b.fs.rel
	}
	la, lb := a.seg.lineOf(a.doc), b.seg.lineOf(b.doc)
	if la != lb {
		return la < lb
	}
	return a.seg.startOf(a.doc) < b.seg.startOf(b.doc)
}

// topK keeps the best k hits with distinct texts (spec §3 "given once").
type topK struct {
	k     int
	h     hitHeap
	where map[uint64]int // text hash -> position in h
	// shared, when set, is the threshold of all the halves of a query
	// searched side by side (see run)
	shared *sharedBound
}

// sharedBound is the highest threshold of a query's halves.
type sharedBound struct{ bits atomic.Uint64 }

func newSharedBound() *sharedBound {
	b := &sharedBound{}
	b.bits.Store(math.Float64bits(-1))
	return b
}

func (b *sharedBound) load() float64 { return math.Float64frombits(b.bits.Load()) }

// raise sets the bound to v if v is higher.
func (b *sharedBound) raise(v float64) {
	for {
		old := b.bits.Load()
		if math.Float64frombits(old) >= v || b.bits.CompareAndSwap(old, math.Float64bits(v)) {
			return
		}
	}
}

func newTopK(k int) *topK {
	t := &topK{k: k, where: map[uint64]int{}}
	t.h.where = t.where
	return t
}

func (t *topK) offer(c hit) {
	if len(t.h.hits) == t.k && c.score < t.h.hits[0].score {
		return // below every kept piece, its own text's included
	}
	hash := c.seg.hash[c.doc]
	if i, ok := t.where[hash]; ok {
		if before(&c, &t.h.hits[i]) {
			t.h.hits[i] = c
			heap.Fix(&t.h, i)
			t.publish()
		}
		return
	}
	if len(t.h.hits) < t.k {
		heap.Push(&t.h, c)
		t.publish()
		return
	}
	if before(&c, &t.h.hits[0]) {
		delete(t.where, t.h.hits[0].seg.hash[t.h.hits[0].doc])
		t.h.hits[0] = c
		t.where[hash] = 0
		heap.Fix(&t.h, 0)
		t.publish()
	}
}

// publish raises the shared threshold to this half's, when it has k.
func (t *topK) publish() {
	if t.shared != nil && len(t.h.hits) == t.k {
		t.shared.raise(t.h.hits[0].score)
	}
}

// threshold is the score a piece must reach to enter: the worst kept when
// there are k, else -1; or the shared threshold, when higher.
func (t *topK) threshold() float64 {
	own := -1.0
	if len(t.h.hits) == t.k {
		own = t.h.hits[0].score
	}
	if t.shared != nil {
		return max(own, t.shared.load())
	}
	return own
}

func (t *topK) sorted() []hit {
	out := slices.Clone(t.h.hits)
	slices.SortFunc(out, func(a, b hit) int {
		if before(&a, &b) {
			return -1
		}
		return 1
	})
	return out
}

// hitHeap is a min-heap by rank (the worst hit on top), keeping where up to date.
type hitHeap struct {
	hits  []hit
	where map[uint64]int
}

func (h *hitHeap) Len() int           { return len(h.hits) }
func (h *hitHeap) Less(i, j int) bool { return before(&h.hits[j], &h.hits[i]) }
func (h *hitHeap) Swap(i, j int) {
	h.hits[i], h.hits[j] = h.hits[j], h.hits[i]
	h.where[h.hits[i].seg.hash[h.hits[i].doc]] = i
	h.where[h.hits[j].seg.hash[h.hits[j].doc]] = j
}
func (h *hitHeap) Push(x any) {
	c := x.(hit)
	h.where[c.seg.hash[c.doc]] = len(h.hits)
	h.hits = append(h.hits, c)
}
func (h *hitHeap) Pop() any {
	c := h.hits[len(h.hits)-1]
	h.hits = h.hits[:len(h.hits)-1]
	delete(h.where, c.seg.hash[c.doc])
	return c
}
