package bm25

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// TestTermRankRandom: a term's index through the rank is what a binary
// search of the whole term column finds, for columns of random gaps (ids
// dense and sparse, blocks with no id, ids on a block's first and last
// bits), every id up to past the last.
func TestTermRankRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	built := 0
	for _, n := range []int{1, 2, 63, 64, 65, 447, 448, 449, 3000, 20000} {
		for _, gap := range []int{1, 2, 3, 8} {
			var terms []uint32
			id := uint32(r.IntN(3))
			for range n {
				terms = append(terms, id)
				id += 1 + uint32(r.IntN(gap))
				if r.IntN(200) == 0 {
					id += rankBits + uint32(r.IntN(rankBits)) // a block or more with none
				}
			}
			if n > 10 {
				terms = append(terms, terms[len(terms)-1]/rankBits*rankBits+rankBits, (terms[len(terms)-1]/rankBits+2)*rankBits-1)
			}
			rank := newTermRank(terms, rankDensity)
			blocks := int(terms[len(terms)-1])/rankBits + 1
			if tooLarge := blocks*rankWords*8*rankDensity > len(terms)*4; (rank == nil) != tooLarge {
				t.Fatalf("%d terms in %d blocks, gap %d: rank built %v", len(terms), blocks, gap, rank != nil)
			}
			if rank == nil {
				continue
			}
			built++
			for x := uint32(0); x <= terms[len(terms)-1]+2*rankBits; x++ {
				want, found := slices.BinarySearch(terms, x)
				if !found {
					want = -1
				}
				if got := rank.index(x); got != want {
					t.Fatalf("%d terms, gap %d: index(%d) = %d, want %d", len(terms), gap, x, got, want)
				}
			}
		}
	}
	if built < 12 {
		t.Fatalf("%d ranks built of 40 columns", built)
	}
}

// TestTermRankSize: a rank is built only where it is at most half the
// term column (rankDensity), and a segment's lookups go through it from its
// rankAt-th on, finding what the samples find.
func TestTermRankSize(t *testing.T) {
	sparse := []uint32{5, 1 << 20}
	if newTermRank(sparse, rankDensity) != nil {
		t.Fatal("a rank of 2 terms over 2^20 ids")
	}
	s := &Segment{}
	for i := range 5000 {
		s.terms = append(s.terms, uint32(3*i+1))
	}
	s.sampleTerms()
	at := int(rankAt(s.terms))
	if at < rankAfter || at >= 2*rankAfter {
		t.Fatalf("built at lookup %d", at)
	}
	for k := range 3 * rankAfter {
		x := uint32(k * 7)
		if got, want := s.termIndex(x), s.sampledIndex(x); got != want {
			t.Fatalf("lookup %d: termIndex(%d) = %d, want %d", k, x, got, want)
		}
		if built := s.rank.rank.Load() != nil; built != (k >= at-1) {
			t.Fatalf("after %d lookups: rank built %v", k+1, built)
		}
	}
	if s.Footprint().Terms < int64(len(s.terms))*4+s.rank.bytes() || s.rank.bytes() == 0 {
		t.Fatalf("footprint %d leaves out the rank's %d bytes", s.Footprint().Terms, s.rank.bytes())
	}
	small := &Segment{terms: sparse}
	small.sampleTerms()
	for range 3 * rankAfter {
		if small.termIndex(1<<20) != 1 {
			t.Fatal("a sparse segment's lookup")
		}
	}
	if small.rank.rank.Load() != nil || !small.rank.none.Load() {
		t.Fatal("a sparse segment's rank built")
	}
}

// TestTermRankEmpty: an empty term column has no rank, and an empty
// segment's lookups, past the one a rank would be built at, find nothing.
func TestTermRankEmpty(t *testing.T) {
	if newTermRank(nil, rankDensity) != nil {
		t.Fatal("a rank of no terms")
	}
	s := &Segment{}
	s.sampleTerms()
	for k := range 3 * rankAfter {
		if i := s.termIndex(uint32(k)); i != -1 {
			t.Fatalf("lookup %d of an empty segment: %d", k, i)
		}
	}
	if s.rank.rank.Load() != nil {
		t.Fatal("an empty segment's rank built")
	}
}

// TestTermRankConcurrent: searches that look terms up at once while one of
// them builds the rank all find what the samples find (go test -race).
func TestTermRankConcurrent(t *testing.T) {
	s := &Segment{}
	for i := range 20000 {
		s.terms = append(s.terms, uint32(2*i))
	}
	s.sampleTerms()
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 4 * rankAfter {
				x := uint32(k*37 + g)
				if got, want := s.termIndex(x), s.sampledIndex(x); got != want {
					errs <- fmt.Sprintf("termIndex(%d) = %d, want %d", x, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if s.rank.rank.Load() == nil {
		t.Fatal("no rank built")
	}
}

// TestTermColumnRank: a term's value in a column by term index (a
// segment's layers and dense) found through the column's rank is the one
// its binary search finds, before the rank is built and after, for every
// index up to past the last, columns dense and sparse alike (a rank of
// term indexes is built at any density).
func TestTermColumnRank(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 5, 300, 5000} {
		for _, every := range []int{1, 3, 40, 2000} {
			var c Sparse[uint32]
			for i := range n * every {
				if r.IntN(every) == 0 {
					c.Set(uint32(i), uint32(i)*7+1)
				}
			}
			if c.Len() == 0 {
				continue
			}
			var rank rankState
			last := int(c.docs[c.Len()-1])
			for round := range 3 * int(rankAt(c.docs)) {
				i := r.IntN(last + 2*rankBits)
				if round%2 == 0 {
					i = int(c.docs[r.IntN(c.Len())])
				}
				got, want := termColumnPtr(&c, &rank, i), c.Ptr(uint32(i))
				if (got == nil) != (want == nil) || got != nil && got != want {
					t.Fatalf("%d of every %d, index %d: %v, want %v", c.Len(), every, i, got, want)
				}
			}
			if rank.rank.Load() == nil {
				t.Fatalf("%d of every %d: no rank built", c.Len(), every)
			}
			for i := range last + 2*rankBits {
				if got, want := termColumnPtr(&c, &rank, i), c.Ptr(uint32(i)); got != want {
					t.Fatalf("%d of every %d, index %d (ranked): %v, want %v", c.Len(), every, i, got, want)
				}
			}
		}
	}
}
