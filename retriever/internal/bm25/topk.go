package bm25

// This file holds the top-k heap: the best k hits with distinct keys, and
// the threshold shared by the halves of a query searched side by side.

import (
	"math"
	"slices"
	"sync/atomic"
)

// A Hit is a scored document: segment Seg's (its place in the slice given
// to Search) document Doc, of group Group.
type Hit struct {
	Score float64
	Seg   int
	Doc   uint32
	Group uint32
	seg   *Segment // segs[Seg], whose key topK reads
}

// A TieOrder orders hits of equal score: a before b. Search asks it only
// for equal scores; it takes hits by value, so that asking it moves no hit
// to the heap.
type TieOrder func(a, b Hit) bool

// A GroupOrder is the first keys of an owner's tie order, when its hits of
// two groups come in an order their groups alone may decide (in retriever,
// a file's episode and path, then the line): negative when group a's come
// first, positive when b's, 0 when the groups do not decide and the
// TieOrder does. Search remembers its last answer, so that a query whose
// best documents tie by the thousand (templated log lines) costs one
// comparison of integers for each tied document of a group that loses to the
// worst kept hit's, not a call of the TieOrder.
type GroupOrder func(a, b uint32) int

// better orders hits: higher score first, then tie.
func better(a, b *Hit, tie TieOrder) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return tie(*a, *b)
}

// topK keeps the best k hits with distinct keys: of the documents of one
// key, the best only.
type topK struct {
	k   int
	tie TieOrder // orders hits of equal score
	h   hitHeap
	// shared, when set, is the threshold of all the halves of a query
	// searched side by side (see run)
	shared *sharedBound
	groups GroupOrder // nil: the tie order alone
	docs   bool       // Query.DocOrder
	memo   groupMemo  // groups' last answer
	// inner, when set, is a nested search's second heap (SearchNested):
	// every hit offered is offered to it too, and the threshold is the
	// lower of the two.
	inner *innerTopK
}

// innerTopK is the heap of a nested search's inner filter: of the hits
// offered (which the outer filter accepted), the best k that it accepts too.
// The filter is asked only of a hit that would enter the heap, its group's
// verdict once a run of offers from one group.
type innerTopK struct {
	top *topK
	f   Filter
	// the last group asked about and its verdict
	seg     int
	group   uint32
	verdict Verdict
	known   bool
}

// offer offers c to the heap when the inner filter accepts it (c is alive).
func (in *innerTopK) offer(c Hit) {
	t := in.top
	if len(t.h.hits) == t.k && !t.beatsWorst(&c) {
		return
	}
	if !in.known || in.seg != c.Seg || in.group != c.Group {
		in.seg, in.group, in.verdict, in.known = c.Seg, c.Group, in.f.Group(c.Seg, c.Group), true
	}
	switch in.verdict {
	case RejectAll:
		return
	case CheckEach:
		if !in.f.Accept(c.Seg, c.Doc, c.Group) {
			return
		}
	}
	t.keep(c)
}

// groupMemo is a GroupOrder's answer for two groups.
type groupMemo struct {
	a, b uint32
	cmp  int
	ok   bool
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

func newTopK(k int, tie TieOrder, groups GroupOrder, docs bool) *topK {
	t := &topK{k: k, tie: tie, groups: groups, docs: docs}
	t.h.tie = tie
	// Room for k hits from the start (up to topKRoom): grown by append,
	// a heap of 10 took five allocations of each slice, fresh memory a
	// cold query met cold (a tenth of a cheap query's ranking, issue 33).
	t.h.hits, t.h.keys = make([]Hit, 0, min(k, topKRoom)), make([]uint64, 0, min(k, topKRoom))
	if k > linearKeysMax {
		t.h.where = map[uint64]int{}
	}
	return t
}

// offer offers a hit that the filter accepted: to the heap, and to the
// inner heap when there is one.
func (t *topK) offer(c Hit) {
	if t.inner != nil {
		t.inner.offer(c)
	}
	t.keep(c)
}

// keep offers c to this heap alone.
func (t *topK) keep(c Hit) {
	// Full, a hit that is not better than the worst kept is better than no
	// kept one, its own key's included: every kept hit is better than the
	// worst. Asked before the key is looked up, as the hits of a query whose
	// best documents tie by the thousand (templated log lines) mostly lose
	// their tie with the worst.
	if len(t.h.hits) == t.k && !t.beatsWorst(&c) {
		return
	}
	c.seg.checkKey(c.Doc)
	hash := c.seg.key[c.Doc]
	if i, ok := t.h.find(hash); ok {
		if better(&c, &t.h.hits[i], t.tie) {
			t.h.hits[i] = c
			t.h.fix(i)
			t.publish()
		}
		return
	}
	if len(t.h.hits) < t.k {
		t.h.push(c, hash)
		t.publish()
		return
	}
	// better than the worst, which it replaces
	t.h.replaceWorst(c, hash)
	t.publish()
}

// touchKeys loads the keys of the documents of s (docs, ascending, with
// their scores) that would enter the heap if offered in turn, as far as
// their scores tell, in a loop of independent loads, and returns a value
// made of them, which its caller keeps so that the loads stay: keep reads
// the key of each hit it takes, a cache miss each in a cold query (and,
// cold, a page walk: a key column is megabytes) that waited for the last
// (issue 33); loaded first, side by side, their misses overlap. Which
// would enter is told by a heap of scores alone, seeded with the kept
// hits' (no key, no filter, and a tie with the worst counted out: of a
// templated line's thousands of ties, few enter), below theta none, at
// most touchMax of them. It changes nothing of what is kept: a key is
// checked (checkKey) where it is read for use, and a guess that is wrong
// costs a load or leaves one to keep.
func (t *topK) touchKeys(s *Segment, docs []uint32, scores []float64, theta float64) uint64 {
	if t.k > linearKeysMax {
		return 0
	}
	var sim [linearKeysMax]float64
	n := len(t.h.hits)
	for i := range n {
		sim[i] = t.h.hits[i].Score
	}
	lo := lowest(sim[:n])
	var sum uint64
	touched := 0
	for j, d := range docs {
		switch sc := scores[j]; {
		case sc < theta:
			continue
		case n < t.k:
			sim[n] = sc
			n++
		case sc > sim[lo]:
			sim[lo] = sc
		default:
			continue
		}
		lo = lowest(sim[:n])
		if int(d) >= len(s.key) {
			continue // a bad posting: its offer's own check says so
		}
		sum += s.key[d] // a hint, unchecked: the key is read again, checked, at its offer
		if touched++; touched == touchMax {
			break
		}
	}
	return sum
}

// touchMax is the most keys touchKeys loads at once: a cheap query's
// blocks offer a few dozen documents a segment.
const touchMax = 64

// lowest returns the place of v's lowest value (0 when v is empty).
func lowest(v []float64) int {
	lo := 0
	for i := range v {
		if v[i] < v[lo] {
			lo = i
		}
	}
	return lo
}

// beatsWorst reports whether c is better than the worst kept hit (the heap
// is full): better, with the groups' order remembered for the next tie of the
// same two groups, and a tie within a group of a segment decided by the
// documents' numbers under Query.DocOrder.
func (t *topK) beatsWorst(c *Hit) bool {
	w := &t.h.hits[0]
	if c.Score != w.Score {
		return c.Score > w.Score
	}
	if c.Group != w.Group {
		if t.groups != nil {
			if cmp := t.groupCmp(c.Group, w.Group); cmp != 0 {
				return cmp < 0
			}
		}
	} else if t.docs && c.Seg == w.Seg {
		return c.Doc < w.Doc
	}
	return t.tie(*c, *w)
}

// losesTie reports, cheaply, that document d of segment seg and group,
// scored as the worst kept hit of the full heap, cannot enter: the groups'
// order puts group after the worst's, or (under Query.DocOrder) the
// document is of the worst's segment and group and numbered after it.
// False says nothing. Of this heap alone: an inner heap has its own cut.
func (t *topK) losesTie(seg int, group, d uint32) bool {
	w := &t.h.hits[0]
	if group == w.Group {
		return t.docs && seg == w.Seg && d > w.Doc
	}
	return t.groups != nil && t.groupCmp(group, w.Group) > 0
}

// cut is the score below which document d of segment seg and group, and
// every later document of its group run in a path's walk of the segment,
// cannot enter this heap (of this heap alone: an inner heap has its own):
// the worst kept hit's score, or just above it when such a document loses
// its tie with it (losesTie); the other half's threshold when higher (a
// document that ties it may still win its tie); -Inf while the heap has
// room. A hit's score is exact (every path sums it in query term order), so
// the cut needs no slack.
func (t *topK) cut(seg int, group, d uint32) float64 {
	c := math.Inf(-1)
	if len(t.h.hits) == t.k {
		c = t.h.hits[0].Score
		if t.losesTie(seg, group, d) {
			c = math.Nextafter(c, math.Inf(1))
		}
	}
	if t.shared != nil {
		c = max(c, t.shared.load())
	}
	return c
}

// An offerGate answers a scoring path that walks a segment's documents in
// increasing order: the score below which a document can enter neither
// heap. It asks once a group run (the filters' verdicts on the run, each
// heap's cut), and again after each offer, so that a templated line's
// thousands of tied documents, which lose their ties by group or by number,
// or are of groups the filter rejects, cost a comparison each.
type offerGate struct {
	top   *topK
	seg   int
	runs  *docCursor // the path's cursor of the filter, whose at decides
	inner *docCursor // the path's cursor of the inner filter, nil when not nested
	end   uint32     // the run's end: cut holds for the documents before it
	cut   float64
}

// newOfferGate returns the gate of segment s, asking the path's cursors.
func newOfferGate(top *topK, s segRef, runs, inner *docCursor, nested bool) offerGate {
	g := offerGate{top: top, seg: s.n, runs: runs}
	if nested {
		g.inner = inner
	}
	return g
}

// at returns the score below which document d (at or after the last one
// asked) can enter neither heap: +Inf when the filter rejects its run
// whole.
func (g *offerGate) at(d uint32) float64 {
	if d >= g.end {
		g.ask(d)
	}
	return g.cut
}

// ask finds the cut of document d's run from d on.
func (g *offerGate) ask(d uint32) {
	group := g.runs.groupAt(d)
	g.end = g.runs.next
	if g.runs.verdict == RejectAll {
		g.cut = math.Inf(1)
		return
	}
	g.cut = g.top.cut(g.seg, group, d)
	if g.inner != nil && !g.inner.rejects(d) {
		g.cut = min(g.cut, g.top.inner.top.cut(g.seg, group, d))
	}
}

// offered tells the gate that a hit was offered: the heaps changed.
func (g *offerGate) offered() { g.end = 0 }

// groupCmp is t.groups(a, b), remembered for the next call.
func (t *topK) groupCmp(a, b uint32) int {
	if m := &t.memo; !m.ok || m.a != a || m.b != b {
		*m = groupMemo{a: a, b: b, cmp: t.groups(a, b), ok: true}
	}
	return t.memo.cmp
}

// publish raises the shared threshold to this half's, when it has k.
func (t *topK) publish() {
	if t.shared != nil && len(t.h.hits) == t.k {
		t.shared.raise(t.h.hits[0].Score)
	}
}

// threshold is the score a document must reach to enter: the worst kept when
// there are k, else -1; or the shared threshold, when higher. With an
// inner heap, the lower of its threshold and this heap's.
func (t *topK) threshold() float64 {
	if t.inner != nil {
		return min(t.ownThreshold(), t.inner.top.ownThreshold())
	}
	return t.ownThreshold()
}

// floor is the score a document must reach to enter a heap, the threshold
// less PruneSlack: either heap's, or the outer heap's alone when onlyOuter
// (the inner filter rejects the document).
func (t *topK) floor(onlyOuter bool) float64 {
	if onlyOuter {
		return t.ownThreshold() * (1 - PruneSlack)
	}
	return t.threshold() * (1 - PruneSlack)
}

// innerCursor returns a cursor of the inner filter over s's documents, for
// a path to learn which group runs only the outer heap may take from; ok
// is false without an inner heap.
func (t *topK) innerCursor(s segRef) (c docCursor, ok bool) {
	if t.inner == nil {
		return docCursor{}, false
	}
	return newDocCursor(t.inner.f, s), true
}

// ownThreshold is threshold without the inner heap.
func (t *topK) ownThreshold() float64 {
	own := -1.0
	if len(t.h.hits) == t.k {
		own = t.h.hits[0].Score
	}
	if t.shared != nil {
		return max(own, t.shared.load())
	}
	return own
}

// sorted returns the hits best first, sorted in place: the heap is done
// with.
func (t *topK) sorted() []Hit {
	out := t.h.hits
	slices.SortFunc(out, func(a, b Hit) int {
		if better(&a, &b, t.tie) {
			return -1
		}
		return 1
	})
	return out
}

// topKRoom is the most hits a heap makes room for at its start: a
// request's k is 10 or less but for a few.
const topKRoom = 64

// linearKeysMax is the largest k whose heap finds a key by a scan of its
// keys rather than a map: at the default top 5 and 10 a scan of a few words
// costs less than hashing, and the map's allocation and upkeep at every
// swap go (issue 33: a query's per-request cost).
const linearKeysMax = 32

// hitHeap is a min-heap by rank (the worst hit on top), each hit's key
// beside it (keys), and where, for a large k, the position of each key.
// Its sift is container/heap's, called directly.
type hitHeap struct {
	hits  []Hit
	keys  []uint64       // keys[i] is hits[i]'s
	where map[uint64]int // key -> position; nil: keys is scanned
	tie   TieOrder
}

// find returns the position of the hit of key, if one is kept.
func (h *hitHeap) find(key uint64) (int, bool) {
	if h.where != nil {
		i, ok := h.where[key]
		return i, ok
	}
	for i, k := range h.keys {
		if k == key {
			return i, true
		}
	}
	return 0, false
}

func (h *hitHeap) less(i, j int) bool { return better(&h.hits[j], &h.hits[i], h.tie) }

func (h *hitHeap) swap(i, j int) {
	h.hits[i], h.hits[j] = h.hits[j], h.hits[i]
	h.keys[i], h.keys[j] = h.keys[j], h.keys[i]
	if h.where != nil {
		h.where[h.keys[i]] = i
		h.where[h.keys[j]] = j
	}
}

// push adds c, of key, and restores the heap.
func (h *hitHeap) push(c Hit, key uint64) {
	h.hits = append(h.hits, c)
	h.keys = append(h.keys, key)
	if h.where != nil {
		h.where[key] = len(h.hits) - 1
	}
	h.up(len(h.hits) - 1)
}

// replaceWorst puts c, of key, in place of the worst hit, and restores the
// heap.
func (h *hitHeap) replaceWorst(c Hit, key uint64) {
	if h.where != nil {
		delete(h.where, h.keys[0])
		h.where[key] = 0
	}
	h.hits[0], h.keys[0] = c, key
	h.fix(0)
}

// fix restores the heap after hits[i] changed (container/heap.Fix).
func (h *hitHeap) fix(i int) {
	if !h.down(i, len(h.hits)) {
		h.up(i)
	}
}

func (h *hitHeap) up(j int) {
	for {
		i := (j - 1) / 2 // parent
		if i == j || !h.less(j, i) {
			break
		}
		h.swap(i, j)
		j = i
	}
}

func (h *hitHeap) down(i0, n int) bool {
	i := i0
	for {
		j1 := 2*i + 1
		if j1 >= n || j1 < 0 { // j1 < 0 after int overflow
			break
		}
		j := j1 // left child
		if j2 := j1 + 1; j2 < n && h.less(j2, j1) {
			j = j2 // = 2*i + 2  // right child
		}
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		i = j
	}
	return i > i0
}
