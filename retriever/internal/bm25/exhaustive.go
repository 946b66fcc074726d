package bm25

// This file holds the exhaustive paths: every posting of rare terms merged
// and scored, or, when a document needs two of the terms, only the documents that
// two lists hold.

import (
	"cmp"
	"slices"
)

// exhaustive scores every posting of the query's terms: each term's lists
// are decoded into one array in document order, then the arrays are merged, so
// that each document is scored once, its length read in order (for a
// segment of few postings, those of the documents to score side by side:
// exhaustiveBatch), and the filter follows the group runs. A document's
// score is summed in query term order, as on the other paths, to the last
// bit.
func (sr *Searcher) exhaustive(s segRef, cs []termCursor, avgdl float64, q *query, f Filter, top *topK) {
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
		sr.maxScore(s, cs, avgdl, q, f, top)
		return
	}
	theta := top.threshold() * (1 - PruneSlack)
	if pairsOnly(cs, distinct, theta) {
		sr.exhaustivePairs(s, cs, avgdl, q, f, top)
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
		t.decode(cs[i:j], f, s)
		terms = append(terms, t)
		i = j
	}
	q.decoded = terms
	if total := postingsOf(terms); total <= exhaustiveBatchMax {
		sr.exhaustiveBatch(s, terms, theta, avgdl, q, f, top)
		return
	}
	norms := q.norms
	runs := newDocCursor(f, s)
	// A document below the outer heap's threshold only the inner heap may
	// take (a nested search).
	inner, nested := top.innerCursor(s)
	gate := newOfferGate(top, s, &runs, &inner, nested)
	// The merge's state in arrays of its own, which the compiler keeps on
	// the stack, not behind the terms' slices. Each array ends in a sentinel
	// past every document, so the merge needs no bounds but the sentinel's.
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
		// The document's terms' bounds first: most documents have too few of the
		// terms to reach the threshold, and are left without reading their
		// length.
		bound, has := 0.0, uint(0)
		for i := range m {
			if head[i] == d {
				bound += ub[i]
				has |= 1 << i
			}
		}
		// The gate's cut is +Inf for a run the filter rejects whole, and the
		// inner heap's is left out of it for a run the inner filter rejects.
		if bound >= theta && bound >= gate.at(d)*(1-PruneSlack) {
			norm := norms.Of(s.Len(d), avgdl)
			score := 0.0
			for i := range m {
				if has&(1<<i) != 0 {
					score += ScoreNorm(idf[i], tfs[i][at[i]], norm)
				}
			}
			if score >= gate.at(d) {
				if ok, tag := runs.at(d); ok {
					top.offer(Hit{Score: score, Seg: s.n, Doc: d, Group: tag, seg: s.Segment})
					theta = top.floor(false)
					gate.offered()
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

// exhaustiveBatch is exhaustive for a segment of few postings (a cheap
// query's: a few dozen): the merge keeps the documents that exhaustive
// would score, with their tfs, then their lengths are read in a loop of
// independent loads, so that their cache misses overlap (a cold query's,
// each a page of the column: issue 33), then they are scored and offered
// (scoreBatch). The offers come after the merge, whose threshold does not
// rise with them: a long list's documents are scored and offered as the
// merge meets them, so that the threshold their offers raise prunes the
// next.
func (sr *Searcher) exhaustiveBatch(s segRef, terms []decodedTerm, theta, avgdl float64, q *query, f Filter, top *topK) {
	runs := newDocCursor(f, s)
	inner, nested := top.innerCursor(s)
	gate := newOfferGate(top, s, &runs, &inner, nested)
	m := len(terms)
	var (
		head [maxMerge]uint32
		idf  [maxMerge]float64
	)
	for i := range terms {
		head[i], idf[i] = terms[i].docs[0], terms[i].idf
	}
	cands, ctf := q.cands[:0], q.candTFs[:0] // a candidate's tfs, by term (0: not in it)
	for {
		d := head[0]
		for i := 1; i < m; i++ {
			d = min(d, head[i])
		}
		if d == ^uint32(0) { // the sentinel
			break
		}
		bound := 0.0
		for i := range m {
			if head[i] == d {
				bound += terms[i].ub
			}
		}
		// As exhaustive's: the gate's cut is +Inf for a run the filter
		// rejects whole.
		if bound >= theta && bound >= gate.at(d)*(1-PruneSlack) {
			cands = append(cands, d)
			for i := range m {
				ctf = append(ctf, terms[i].tfs[terms[i].at]&-uint32(b2i(head[i] == d)))
			}
		}
		for i := range m {
			if t := &terms[i]; head[i] == d {
				t.at++
				head[i] = t.docs[t.at]
			}
		}
	}
	q.cands, q.candTFs = cands, ctf
	q.scoreBatch(s, cands, ctf, idf[:m], avgdl, f, top)
}

// postingsOf returns how many postings the decoded terms hold.
func postingsOf(terms []decodedTerm) int {
	n := 0
	for i := range terms {
		n += len(terms[i].docs) - 1 // each ends in a sentinel
	}
	return n
}

// exhaustiveBatchMax is the most postings a segment's query terms may have
// for exhaustive to score them as a batch.
const exhaustiveBatchMax = 128

// scoreBatch scores documents cands of s (ascending), whose tfs are in ctf
// (len(idf) a document, in query term order, 0 where it has not the term),
// and offers those that can enter (offerScored, under the threshold as it
// rises: a document whose bound is below it scores below it): their
// lengths read first, side by side.
func (q *query) scoreBatch(s segRef, cands, ctf []uint32, idf []float64, avgdl float64, f Filter, top *topK) {
	if len(cands) == 0 {
		return
	}
	m := len(idf)
	dls := q.lengthsOf(s, cands)
	scores := slices.Grow(q.candScores[:0], len(cands))[:len(cands)]
	for j := range cands {
		norm := q.norms.Of(dls[j], avgdl)
		score := 0.0
		for i, tf := range ctf[j*m : j*m+m] {
			if tf > 0 {
				score += ScoreNorm(idf[i], tf, norm)
			}
		}
		scores[j] = score
	}
	q.candScores = scores
	q.touched += offerScored(s, cands, scores, f, top)
}

// lengthsOf returns the lengths of documents docs of s, in q's buffer
// (candDLs), read in a loop of independent loads: their cache misses
// overlap, where each read beside its document's scoring waited for the
// last.
func (q *query) lengthsOf(s segRef, docs []uint32) []uint16 {
	dls := slices.Grow(q.candDLs[:0], len(docs))[:len(docs)]
	for j, d := range docs {
		dls[j] = s.Len(d)
	}
	q.candDLs = dls
	return dls
}

// pairsOnly reports whether no term alone can reach theta, so that a document
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

// exhaustivePairs is exhaustive when a document needs two of the terms. Each
// list is decoded on its own (a split term's two are not merged), and a bit
// per document finds the documents that a second list holds too: a test and a set
// per posting, each independent of the last, where intersecting sorted
// arrays waits on every comparison. Only those documents are scored. A document
// is in one list of its own term at most, so a second sighting is another
// term's.
func (sr *Searcher) exhaustivePairs(s segRef, cs []termCursor, avgdl float64, q *query, f Filter, top *topK) {
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
		lists[i].docs, lists[i].tfs = decodeKept(&cs[i], f, s, lists[i].docs, lists[i].tfs)
		lists[i].docs, lists[i].tfs = append(lists[i].docs, ^uint32(0)), append(lists[i].tfs, 0)
		total += len(lists[i].docs) - 1
	}
	words := (s.Docs() + 63) / 64
	if cap(q.seen) < words {
		q.seen = make([]uint64, words)
	}
	seen := q.seen[:words]
	cands := slices.Grow(q.cands[:0], total)[:total]
	n := 0
	// Each list's second sightings come in its own order: the candidates
	// are a few ascending runs, merged below (sorting them cost a third of
	// a query whose terms are all in thousands of the same documents).
	var runEnds [2 * maxPairTerms]int
	for i := range lists {
		docs := lists[i].docs
		for _, d := range docs[:len(docs)-1] {
			w, bit := d>>6, uint64(1)<<(d&63)
			cands[n] = d
			n += int((seen[w] & bit) >> (d & 63)) // seen before: a candidate
			seen[w] |= bit
		}
		runEnds[i] = n
	}
	clearSeen(seen, lists, total)
	q.cands = cands
	cands = mergeRuns(cands[:n], runEnds[:len(lists)], &q.merged)
	// The candidates of groups the filter rejects whole are left now (a
	// query whose best documents are in files outside the request's rules).
	runs := newDocCursor(f, s)
	cands = slices.DeleteFunc(cands, runs.rejects)
	dls := q.lengthsOf(s, cands)
	// Each list's tfs of the candidates, a list at a time: walked beside
	// the candidates when the list is not much longer (templated lines: the
	// same documents in every list; a fifth of the storm's query), else
	// searched ahead (tfOf), which a walk of a list four times longer lost
	// to.
	nc := len(cands)
	ctf := slices.Grow(q.candTFs[:0], nc*len(lists))[:nc*len(lists)]
	q.candTFs = ctf
	for i := range lists {
		col := ctf[i*nc : (i+1)*nc]
		if docs := lists[i].docs; len(docs) <= nc+nc/4+1 {
			tfs, p := lists[i].tfs, 0
			for j, d := range cands {
				for docs[p] < d { // ends in a sentinel past every document
					p++
				}
				col[j] = tfs[p] & -uint32(b2i(docs[p] == d))
			}
		} else {
			for j, d := range cands {
				col[j] = lists[i].tfOf(d)
			}
		}
	}
	scores := slices.Grow(q.candScores[:0], len(cands))[:len(cands)]
	// A document of the last one's length and tfs gets its score without a
	// division: templated lines are thousands of such documents.
	var tfs, lastTFs [2 * maxPairTerms]uint32
	lastDL, lastScore := -1, 0.0
	for j := range cands {
		same := int(dls[j]) == lastDL
		for i := range lists {
			// Lists are in query term order, a term's found in one.
			tfs[i] = ctf[i*nc+j]
			same = same && tfs[i] == lastTFs[i] // not the arrays' ==: a call of memequal
		}
		if same {
			scores[j] = lastScore
			continue
		}
		norm := q.norms.Of(dls[j], avgdl)
		score := 0.0
		for i := range lists {
			if tf := tfs[i]; tf > 0 {
				score += ScoreNorm(lists[i].idf, tf, norm)
			}
		}
		scores[j], lastDL, lastTFs, lastScore = score, int(dls[j]), tfs, score
	}
	q.candScores = scores
	q.touched += offerScored(s, cands, scores, f, top)
}

// offerScored offers the documents of s (ascending) that f accepts and whose
// scores can enter.
func offerScored(s segRef, docs []uint32, scores []float64, f Filter, top *topK) uint64 {
	runs := newDocCursor(f, s)
	inner, nested := top.innerCursor(s)
	gate := newOfferGate(top, s, &runs, &inner, nested)
	theta := top.floor(false)
	touched := top.touchKeys(s.Segment, docs, scores, theta)
	for j, d := range docs {
		// A score under both heaps' threshold is left before the gate asks
		// the filters about its run (most runs of a cheap query's pairs
		// hold no candidate that can enter); a document of a group the
		// filter rejects whole, or that loses its tie in both heaps, before
		// it is offered.
		if scores[j] < theta || scores[j] < gate.at(d) {
			continue
		}
		if ok, tag := runs.at(d); ok {
			top.offer(Hit{Score: scores[j], Seg: s.n, Doc: d, Group: tag, seg: s.Segment})
			theta = top.floor(false)
			gate.offered()
		}
	}
	return touched
}

// mergeRuns returns the distinct documents of ascending runs (runs, each
// ending at its end in ends), ascending: a run itself when it is the only
// one, else a merge in one of bufs, which keep their room for the next query.
func mergeRuns(runs []uint32, ends []int, bufs *[2][]uint32) []uint32 {
	var merged []uint32
	from, k := 0, 0
	for _, end := range ends {
		run := runs[from:end]
		from = end
		if len(run) == 0 {
			continue
		}
		if merged == nil {
			merged = run
			continue
		}
		// merged is a run or the other buffer's: never the one written
		dst := slices.Grow(bufs[k][:0], len(merged)+len(run))
		i, j := 0, 0
		for i < len(merged) && j < len(run) {
			a, b := merged[i], run[j]
			dst = append(dst, min(a, b))
			i += b2i(a <= b)
			j += b2i(b <= a)
		}
		dst = append(append(dst, merged[i:]...), run[j:]...)
		bufs[k], merged, k = dst, dst, k^1
	}
	return merged
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

// decodedTerm is one query term's postings in a segment, decoded, in document
// order and ending in a sentinel doc; its buffers are kept by the query for
// the next segment.
type decodedTerm struct {
	docs, tfs []uint32
	at        int
	idf, ub   float64
	spare     []uint32 // for merging a split term's lists
}

// decode fills the term from its lists (one, or a split term's two) in
// segment s, but for the blocks whose documents f rejects whole.
func (t *decodedTerm) decode(ls []termCursor, f Filter, s segRef) {
	t.docs, t.tfs, t.at = t.docs[:0], t.tfs[:0], 0
	t.idf, t.ub = ls[0].idf, 0
	for i := range ls {
		c := &ls[i]
		t.ub = max(t.ub, c.ub)
		first := len(t.docs)
		t.docs, t.tfs = decodeKept(c, f, s, t.docs, t.tfs)
		if first > 0 {
			t.mergeAt(first)
		}
	}
	t.docs, t.tfs = append(t.docs, ^uint32(0)), append(t.tfs, 0)
}

// clearSeen clears the bits exhaustivePairs set, for its next use: the
// words of the lists' documents alone when they are few beside the bit set
// (a rare pair's few hundred documents, where the set has a word for every
// 64 documents of the segment: 19,000 words, 150 KB, for 1.2 million, whose
// every line a clear of the whole brought into the cache, some 40 pages a
// segment of a cheap search), else the whole set.
func clearSeen(seen []uint64, lists []decodedTerm, total int) {
	if total >= len(seen)/8 {
		clear(seen)
		return
	}
	for i := range lists {
		docs := lists[i].docs
		for _, d := range docs[:len(docs)-1] { // less the sentinel
			seen[d>>6] = 0
		}
	}
}

// decodeKept appends the postings of c's list in segment s to docs and
// tfs, but for its blocks whose documents' group runs f rejects whole: a
// document of them is never a hit, so what its other terms hold does not
// matter either (a request whose rules leave most files out, such as the
// second ranking without a context).
func decodeKept(c *termCursor, f Filter, s segRef, docs, tfs []uint32) ([]uint32, []uint32) {
	if len(c.it.skips) == 0 {
		return decodeFrom(c.it.p, ^uint32(0), docs, tfs)
	}
	runs := newDocCursor(f, s)
	for si := range c.blocks() {
		from, end, prev, _ := c.block(si)
		if !runs.rejectsThrough(c.firstDoc(si, from, prev), c.lastDoc(si)) {
			docs, tfs = decodeFrom(c.it.p[from:end], prev, docs, tfs)
		}
	}
	return docs, tfs
}

// tfOf returns the term's tf in document d (0: not in it), for documents asked in
// increasing order: the next few documents looked at in turn (the next
// document asked is most often one of them), then searched ahead by steps
// that double, then halved.
func (t *decodedTerm) tfOf(d uint32) uint32 {
	docs := t.docs[t.at:] // ends in a sentinel past every document
	for i, x := range docs[:min(len(docs), tfOfNear)] {
		if x >= d { // the terms of templated lines are in the same documents: i is 0
			t.at += i
			if x == d {
				return t.tfs[t.at]
			}
			return 0
		}
	}
	hi := tfOfNear
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

// tfOfNear is how many documents tfOf looks at in turn before it searches.
const tfOfNear = 4

// mergeAt merges the two runs in document order that the term's arrays hold,
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
