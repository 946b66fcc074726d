package bm25

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestMergeCandidates: small segments are merged once there are enough, but
// one that would be most of the merge waits, unless it is mostly dead.
func TestMergeCandidates(t *testing.T) {
	seg := func(docs, dead int) *Segment {
		return &Segment{key: make([]uint64, docs), ndead: dead}
	}
	tiny := func(n int) []*Segment {
		var ss []*Segment
		for range n {
			ss = append(ss, seg(10, 0))
		}
		return ss
	}
	big := seg(60000, 0)
	for _, tc := range []struct {
		name string
		segs []*Segment
		want int // segments merged
	}{
		{"too few", tiny(MergeSmallAt - 1), 0},
		{"enough", tiny(MergeSmallAt), MergeSmallAt},
		{"large ones are not small", append(tiny(MergeSmallAt-1), seg(SmallSegmentDocs, 0)), 0},
		{"one small but big waits", append(tiny(MergeSmallAt), big), MergeSmallAt},
		{"and holds back too few others", append(tiny(MergeSmallAt-1), big), 0},
		{"a mostly dead one goes in", append(tiny(MergeSmallAt-1), seg(60000, 40000)), MergeSmallAt},
		{"a fair share of it", append(tiny(MergeSmallAt-1), seg(60000, 0), seg(15000, 0)), MergeSmallAt + 1},
	} {
		if got := len(MergeCandidates(tc.segs)); got != tc.want {
			t.Errorf("%s: %d segments merged, want %d", tc.name, got, tc.want)
		}
	}
}

// A merge of segments with dead documents is the segment a builder makes
// of their live documents in order, column for column (every kind of
// term: split, dense, long documents, big tfs).
func TestMergeEqualsBuiltAgain(t *testing.T) {
	const layerMin = 64
	ti := newTestIndex()
	var live []testDoc
	for seg := range 4 {
		var docs []testDoc
		for i := range 1500 + seg*400 {
			words := []string{"common", fmt.Sprintf("rare%d_%d", seg, i), fmt.Sprintf("mid%d", i%40)}
			if i%3 == 0 {
				words = append(words, "often")
			}
			for j := range i % 23 {
				words = append(words, fmt.Sprintf("pad%d", j))
			}
			if i%500 == 0 {
				words = append(words, strings.Repeat("loud ", 300+i%7))
			}
			docs = append(docs, testDoc{text: strings.Join(words, " "), group: uint32(i / 100), part: uint32(i % 2)})
		}
		s := ti.add(layerMin, docs...)
		for d := range docs {
			if (d*7+seg)%5 == 0 {
				s.Kill(uint32(d))
			} else {
				live = append(live, docs[d])
			}
		}
	}
	merged, moved := Merge(ti.segs, layerMin)
	again := newTestIndex()
	again.dict, again.seed = ti.dict, ti.seed
	want := again.add(layerMin, live...)
	if !reflect.DeepEqual(merged, want) {
		sameSegment(t, want, merged)
		t.Fatal("the merged segment differs from the one built again")
	}
	n := 0
	for i, m := range moved {
		for d, to := range m {
			if ti.segs[i].Dead(uint32(d)) != (to == 0) || (to != 0 && int(to) != n+1) {
				t.Fatalf("segment %d document %d moved to %d", i, d, to)
			}
			if to != 0 {
				n++
			}
		}
	}
}

// finishDocs lays out docs as one batch, its builder set by set, and gives
// the segment, the batch's statistics and the builder.
func finishDocs(docs []testDoc, set func(*Builder)) (*Segment, *Stats, *Builder) {
	ti := newTestIndex()
	b := NewBuilder(64)
	set(b)
	for i, d := range docs {
		b.Count([]byte(d.text))
		b.Add(uint64(i+1), d.group, d.part)
	}
	global := ti.dict.Assign(b.Terms())
	s := b.Finish(global)
	ti.stats.Add(b, global)
	return s, &ti.stats, b
}

// passDocs are n documents of a few common and many rare terms.
func passDocs(n int) []testDoc {
	var docs []testDoc
	for i := range n {
		docs = append(docs, testDoc{text: fmt.Sprintf("common w%d w%d x%d", i%97, i%13, i), part: uint32(i % 3)})
	}
	return docs
}

// Finish's sort a few terms a pass (down to one term a pass) lays out the
// segment one pass does.
func TestFinishPassesEqualOne(t *testing.T) {
	docs := passDocs(2000)
	one, oneStats, _ := finishDocs(docs, func(b *Builder) { b.passLimit = 1 << 30 })
	for _, limit := range []int{1, 50, 700} {
		s, st, _ := finishDocs(docs, func(b *Builder) { b.passLimit = limit })
		if !reflect.DeepEqual(s, one) {
			t.Fatalf("passes of %d postings: the segment differs", limit)
		}
		sameStats(t, oneStats, st)
	}
}

// A builder told to sort in one pass lays out the segment passes do (30,000
// documents: some 120,000 postings, more than finishPassMin, so the other
// sorts in two), and hands the setting to the next batch's builder.
func TestOnePassEqualsPasses(t *testing.T) {
	docs := passDocs(30000)
	one, oneStats, b := finishDocs(docs, func(b *Builder) { b.SetOnePass(true) })
	passes, st, _ := finishDocs(docs, func(*Builder) {})
	if !reflect.DeepEqual(one, passes) {
		t.Fatal("one pass and four lay out different segments")
	}
	sameStats(t, oneStats, st)
	if !b.Next(0).onePass {
		t.Fatal("Next dropped the one-pass setting")
	}
	if got := SortBufferExtra(16 << 20); got <= 0 || got >= 16<<20*2 {
		t.Errorf("SortBufferExtra(16 MiB) = %d", got)
	}
}

// Batches built one after the other by the builders Next hands on (its
// log, sort buffer, term table and columns taken over, emptied) lay out
// the segments and statistics fresh builders do, batch after batch, with
// batches of more and fewer terms and documents than the last; and Next
// expects the postings a byte the batch it follows had.
func TestNextBatchEqualsFresh(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	chained := newTestIndex()
	fresh := newTestIndex()
	fresh.seed = chained.seed
	b := NewBuilder(64)
	for batch, n := range []int{3000, 200, 5000, 40, 1200} {
		docs := make([]testDoc, n)
		for i := range docs {
			docs[i] = testDoc{text: fmt.Sprintf("common b%d w%d x%d y%d", batch, r.IntN(50), r.IntN(n*3), i), group: uint32(i / 7), part: uint32(r.IntN(4))}
		}
		fb := NewBuilder(64)
		for _, bl := range []*Builder{b, fb} {
			bl.Reserve(int64(n) * 20)
			for i, d := range docs {
				bl.Count([]byte(d.text))
				bl.Add(uint64(i+1), d.group, d.part)
			}
		}
		gb, gf := chained.dict.Assign(b.Terms()), fresh.dict.Assign(fb.Terms())
		if !slices.Equal(gb, gf) {
			t.Fatalf("batch %d: the term tables assign other ids", batch)
		}
		sb, sf := b.Finish(gb), fb.Finish(gf)
		if !reflect.DeepEqual(sb, sf) {
			t.Fatalf("batch %d: the segment of the builder Next made differs from a fresh one's", batch)
		}
		chained.stats.Add(b, gb)
		fresh.stats.Add(fb, gf)
		sameStats(t, &fresh.stats, &chained.stats)
		postings := len(b.log)
		b = b.Next(int64(n) * 20)
		if want := float64(postings) / float64(n*20) * reserveRoom; b.perByte != want {
			t.Fatalf("batch %d: the next expects %v postings a byte, want %v", batch, b.perByte, want)
		}
	}
}

// A batch's postings sorted as 32-bit words (its documents fewer than
// narrowDocs) lay out the segment and statistics 64-bit words do, in one
// pass and in several.
func TestFinishNarrowEqualsWide(t *testing.T) {
	docs := passDocs(30000)
	for _, onePass := range []bool{true, false} {
		narrow, narrowStats, _ := finishDocs(docs, func(b *Builder) { b.SetOnePass(onePass) })
		wide, wideStats, b := finishDocs(docs, func(b *Builder) { b.SetOnePass(onePass); b.wideSort = true })
		if !reflect.DeepEqual(narrow, wide) {
			t.Fatalf("one pass %v: the segment sorted narrow differs from the wide sort's", onePass)
		}
		sameStats(t, wideStats, narrowStats)
		if len(b.sorted) == 0 || len(b.sorted32) != 0 {
			t.Fatal("the wide sort did not sort wide")
		}
	}
}

// A batch that read many bytes for few postings (files left out) does not
// have the next one expect almost none: its log would grow a quarter at a
// time from nothing.
func TestNextBatchExpectsAFloor(t *testing.T) {
	b := NewBuilder(64)
	b.Count([]byte("one two"))
	b.Add(1, 0, 0)
	b.Finish(NewDict().Assign(b.Terms()))
	if n := b.Next(1 << 30); n.perByte != postingsPerByte/8 {
		t.Fatalf("after 2 postings in 1 GiB the next batch expects %v postings a byte, want %v", n.perByte, postingsPerByte/8)
	}
}
