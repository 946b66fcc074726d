package retriever

// This file holds the top-k heap: the best k hits with distinct texts, and
// the threshold shared by the halves of a query searched side by side.

import (
	"container/heap"
	"math"
	"slices"
	"sync/atomic"
)

// hit is a scored piece. The scoring paths give score, seg, doc and the tag
// the docFilter gave the piece (its file id); fs is the piece's file, set by
// Index.run for the hits it returns.
type hit struct {
	score float64
	seg   *segment
	doc   uint32
	tag   uint32
	fs    *fileState
}

// better orders hits: higher score first, then tie.
func better(a, b *hit, tie func(a, b hit) bool) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return tie(*a, *b)
}

// topK keeps the best k hits with distinct texts (spec §3 "given once").
type topK struct {
	k     int
	tie   func(a, b hit) bool // orders hits of equal score
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

func newTopK(k int, tie func(a, b hit) bool) *topK {
	t := &topK{k: k, tie: tie, where: map[uint64]int{}}
	t.h.where, t.h.tie = t.where, tie
	return t
}

func (t *topK) offer(c hit) {
	if len(t.h.hits) == t.k && c.score < t.h.hits[0].score {
		return // below every kept piece, its own text's included
	}
	hash := c.seg.hash[c.doc]
	if i, ok := t.where[hash]; ok {
		if better(&c, &t.h.hits[i], t.tie) {
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
	if better(&c, &t.h.hits[0], t.tie) {
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
		if better(&a, &b, t.tie) {
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
	tie   func(a, b hit) bool
}

func (h *hitHeap) Len() int           { return len(h.hits) }
func (h *hitHeap) Less(i, j int) bool { return better(&h.hits[j], &h.hits[i], h.tie) }
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
