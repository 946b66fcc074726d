package bm25

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestMergePolicyPicks: which run of segments the policy merges, for
// segments of given sizes (a policy of factor 4, floor 1 KB and at most
// 100 KB a merge).
func TestMergePolicyPicks(t *testing.T) {
	p := MergePolicy{Factor: 4, Floor: 1000, MaxBytes: 100_000}
	sz := func(bytes ...int64) []SegmentSize {
		var zs []SegmentSize
		for _, b := range bytes {
			zs = append(zs, SegmentSize{Bytes: b, Docs: 100})
		}
		return zs
	}
	dead := func(zs []SegmentSize, i, n int) []SegmentSize {
		zs[i].Dead = n
		return zs
	}
	for _, tc := range []struct {
		name   string
		sizes  []SegmentSize
		lo, hi int // [lo, hi): picked; lo == hi: none
	}{
		{"none", nil, 0, 0},
		{"one", sz(10), 0, 0},
		{"too few tiny", sz(10, 20, 30), 0, 0},
		{"factor tiny", sz(10, 20, 30, 40), 0, 4},
		{"factor tiny after a large one", sz(90_000, 10, 20, 30, 40, 50), 1, 5},
		{"levels do not mix", sz(10, 20, 5000, 30, 40), 0, 0},
		{"a run of one level in between", sz(10, 2000, 3000, 2500, 3500, 20), 1, 5},
		{"smaller ones between go with them", sz(2000, 10, 3000, 20, 2500, 3500), 0, 5},
		{"smaller ones after the last of the level are left", sz(2000, 10, 20, 30), 0, 0},
		{"and merged with their own level", sz(2000, 10, 20, 30, 40), 1, 5},
		{"as many as the bound takes", sz(30_000, 30_000, 30_000, 30_000), 0, 3},
		{"the bound's run, then the rest", sz(60_000, 30_000, 30_000, 30_000, 30_000), 1, 4},
		{"two of one level that a third would overfill", sz(45_000, 45_000, 45_000), 0, 2},
		{"two that a next of another level would not", sz(45_000, 45_000, 5000), 0, 0},
		{"over half the bound: never", sz(51_000, 49_000, 49_000, 49_000), 1, 3},
		{"the last run may grow", sz(51_000, 49_000, 49_000), 0, 0},
		{"over the bound: never", sz(200_000, 200_000, 200_000, 200_000), 0, 0},
		{"over the bound in a run", sz(20_000, 20_000, 200_000, 20_000, 20_000), 0, 0},
		{"mostly dead goes alone", dead(sz(20_000, 30_000, 5000), 1, 60), 1, 2},
		{"half dead stays", dead(sz(20_000, 30_000, 5000), 1, 50), 0, 0},
		{"mostly dead over the bound stays", dead(sz(300_000, 20), 0, 90), 0, 0},
		{"mostly dead tiny waits for its level", dead(sz(20_000, 900, 5000), 1, 90), 0, 0},
		{"dead bytes do not count", dead(sz(80_000, 60_000, 30_000, 30_000, 30_000), 1, 40), 1, 4},
	} {
		lo, hi := p.Pick(tc.sizes)
		if lo == hi {
			lo, hi = 0, 0
		}
		if lo != tc.lo || hi != tc.hi {
			t.Errorf("%s: picked [%d, %d), want [%d, %d)", tc.name, lo, hi, tc.lo, tc.hi)
		}
	}
}

// Merged as the policy picks until it picks none, random sizes end in
// few segments: the merging stops, every merge's output is within the
// bound, no segment over the bound is picked, and one picked alone is
// mostly dead.
func TestMergePolicyTerminates(t *testing.T) {
	p := MergePolicy{Factor: 4, Floor: 1000, MaxBytes: 100_000}
	r := rand.New(rand.NewPCG(5, 6))
	for round := range 300 {
		var sizes []SegmentSize
		for range 1 + r.IntN(80) {
			z := SegmentSize{Bytes: int64(1 + r.IntN([]int{2000, 20_000, 150_000}[r.IntN(3)])), Docs: 1000}
			if r.IntN(5) == 0 {
				z.Dead = r.IntN(1000)
			}
			sizes = append(sizes, z)
		}
		n := len(sizes)
		for merges := 0; ; merges++ {
			if merges > n {
				t.Fatalf("round %d: %d merges of %d segments", round, merges, n)
			}
			lo, hi := p.Pick(sizes)
			if lo >= hi {
				break
			}
			var out SegmentSize
			for _, z := range sizes[lo:hi] {
				if z.Bytes > p.MaxBytes {
					t.Fatalf("round %d: picked a segment of %d bytes", round, z.Bytes)
				}
				out.Bytes += z.Live()
				out.Docs += z.Docs - z.Dead
			}
			if out.Bytes > p.MaxBytes {
				t.Fatalf("round %d: a merge of %d live bytes", round, out.Bytes)
			}
			if hi-lo < 2 && !sizes[lo].mostlyDead() {
				t.Fatalf("round %d: one segment picked, not mostly dead", round)
			}
			sizes = slices.Replace(sizes, lo, hi, out)
			if out.Docs == 0 {
				sizes = slices.Delete(sizes, lo, lo+1)
			}
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
	merged, moved := Merge(ti.segs, nil, layerMin, nil)
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

// A segment merged from others chooses the ways they chose (Tuning's
// limits relative to its documents, ScaleDocs): where each of them scored
// a query's terms every posting (and its terms were within its limit by a
// few bytes, which a merge may add to a list at each source's first
// document), the merged one does; where each had them over its limit, the
// merged one has; and alike for each term's prefill. With the limits a
// segment's whatever its size, the merged one goes another way for some
// queries (checked too, so that the case is met).
func TestMergedSegmentChoosesAlike(t *testing.T) {
	const docsEach = 3000
	ti := newTestIndex()
	r := rand.New(rand.NewPCG(7, 8))
	for range 6 {
		docs := make([]testDoc, docsEach)
		for i := range docs {
			var words []string
			for range 4 + r.IntN(8) {
				// rank ~ 1/u: a few frequent words, many rare ones
				words = append(words, fmt.Sprintf("w%d", int(1/(r.Float64()+0.002))))
			}
			docs[i] = testDoc{text: strings.Join(words, " ")}
		}
		ti.add(math.MaxInt, docs...) // no split lists: a term's bytes add up
	}
	merged, _ := Merge(ti.segs, nil, math.MaxInt, nil)
	scaled := Tuning{ExhaustiveMax: 400, ExhaustiveSpread: 8, PrefillMax: 200, ScaleDocs: docsEach}
	flat := scaled
	flat.ScaleDocs = 0
	const slack = 8 // bytes a merge may add to a list
	termBytes := func(s *Segment, term uint32) float64 {
		i := s.termIndex(term)
		if i < 0 {
			return 0
		}
		return float64(s.meta[i+1].off - s.meta[i].off)
	}
	var words []uint32
	for w := range 400 {
		if id := ti.dict.Lookup([]string{fmt.Sprintf("w%d", w)}); len(id) == 1 {
			words = append(words, id[0])
		}
	}
	checked, differs := 0, 0
	for i, a := range words {
		for _, b := range words[i+1:] {
			allIn, allOver := true, true
			for _, s := range ti.segs {
				limit, _ := scaled.Limits(s.Docs())
				bytes := []float64{termBytes(s, a), termBytes(s, b)}
				in := scaled.scoresEvery(s.Docs(), bytes)
				if !in || bytes[0]+bytes[1]+slack > float64(limit) {
					allIn = false
				}
				if bytes[0]+bytes[1] <= float64(limit) {
					allOver = false
				}
			}
			bytes := []float64{termBytes(merged, a), termBytes(merged, b)}
			limit, _ := scaled.Limits(merged.Docs())
			switch {
			case allIn:
				checked++
				if !scaled.scoresEvery(merged.Docs(), bytes) {
					t.Fatalf("terms %d %d: every source scored every posting, the merged segment does not (%v bytes, limit %d)", a, b, bytes, limit)
				}
				if !flat.scoresEvery(merged.Docs(), bytes) {
					differs++
				}
			case allOver:
				checked++
				if bytes[0]+bytes[1] <= float64(limit) {
					t.Fatalf("terms %d %d: every source was over its limit, the merged segment is not (%v bytes, limit %d)", a, b, bytes, limit)
				}
			}
		}
		allIn, allOver := true, true
		for _, s := range ti.segs {
			_, most := scaled.Limits(s.Docs())
			n := termBytes(s, a)
			allIn = allIn && n+slack <= float64(most)
			allOver = allOver && n > float64(most)
		}
		_, most := scaled.Limits(merged.Docs())
		if n := termBytes(merged, a); (allIn && n > float64(most)) || (allOver && n <= float64(most)) {
			t.Fatalf("term %d: prefilled in every source: %v, the merged segment's %v bytes against %d", a, allIn, n, most)
		}
	}
	if checked < 100 || differs == 0 {
		t.Fatalf("%d pairs checked, %d of them scored otherwise with unscaled limits: the data do not test the scaling", checked, differs)
	}
	t.Logf("%d pairs checked, %d would go another way unscaled", checked, differs)
}

// The same documents as many small segments (some dead) and merged as the
// policy picks until it picks none: every query gives the same hits (keys,
// scores, groups, in the same order: the ties too), on every scoring path
// and under every tie order, the merged segments at their sources' place
// (so that the place order of the documents is kept).
func TestMergedAnswersEqual(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, p := range pruningPaths {
		for _, o := range tieOrders {
			if o.bySegment { // the merged index orders its ties otherwise
				continue
			}
			t.Run(p.name+"/"+o.name, func(t *testing.T) {
				ti := newTestIndex()
				ti.tie, ti.groups, ti.docs = o.tie, o.groups, o.docs
				for i := range 24 {
					n := []int{40, 300, 900, 150}[i%4] + r.IntN(100)
					docs := randomDocs(r, n)
					if i%3 == 0 {
						docs = templatedDocs(r, n, []int{3, 50}[i%2])
					}
					s := ti.add(p.tune.LayerMin, docs...)
					for d := uint32(i % 7); d < uint32(s.Docs()); d += 7 + uint32(i%5)*10 {
						ti.stats.Drop(s.Group(d)%2, s, d, d+1)
					}
				}
				merged := &testIndex{dict: ti.dict, stats: ti.stats, seed: ti.seed, tie: ti.tie, groups: ti.groups, docs: ti.docs, segs: slices.Clone(ti.segs)}
				policy := MergePolicy{Factor: 3, Floor: 4 << 10, MaxBytes: 200 << 10}
				for {
					sizes := make([]SegmentSize, len(merged.segs))
					for i, s := range merged.segs {
						sizes[i] = SegmentSize{Bytes: SegmentBytes(s), Docs: s.Docs(), Dead: s.DeadCount()}
					}
					lo, hi := policy.Pick(sizes)
					if lo >= hi {
						break
					}
					m, _ := Merge(merged.segs[lo:hi], nil, p.tune.LayerMin, nil)
					merged.segs = slices.Replace(merged.segs, lo, hi, m)
				}
				if len(merged.segs) > len(ti.segs)/3 {
					t.Fatalf("%d segments merged into %d", len(ti.segs), len(merged.segs))
				}
				queries := []string{"rate limited retrying", "retrying", "w0", "w1 w2", "w3 w300", "rate w0 w1", "call again"}
				for range 30 {
					var words []string
					for range 1 + r.IntN(3) {
						words = append(words, fmt.Sprintf("w%d", int(math.Pow(r.Float64(), 2)*400)))
					}
					queries = append(queries, strings.Join(words, " "))
				}
				for qi, query := range queries {
					k := []int{1, 5, 10, 50}[qi%4]
					part := []int{-1, -1, 0, 1}[qi%4]
					for fi, f := range []Filter{nil, spanFilter{lo: 1, hi: 12}} {
						if part >= 0 {
							f = partFilter{f, uint32(part)}
						}
						got, want := merged.search(t, p.tune, query, part, k, f), ti.search(t, p.tune, query, part, k, f)
						if !sameAnswers(got, want) {
							t.Fatalf("%q part %d k %d filter %d:\n merged %v\n  small %v", query, part, k, fi, brief(got), brief(want))
						}
					}
				}
			})
		}
	}
}

// sameAnswers reports whether two searches found the same documents (by
// key and group) with the same scores in the same order.
func sameAnswers(a, b []Hit) bool {
	return slices.EqualFunc(a, b, func(x, y Hit) bool {
		return x.Score == y.Score && x.Group == y.Group && x.seg.Key(x.Doc) == y.seg.Key(y.Doc)
	})
}

// A merge given copies of its sources' dead bits merges as they were when
// copied, whatever dies in the sources meanwhile (its owner kills those in
// the merged segment after).
func TestMergeOfDeadBitsCopied(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	ti := newTestIndex()
	for i := range 3 {
		s := ti.add(64, randomDocs(r, 500+i*300)...)
		for d := uint32(i); d < uint32(s.Docs()); d += 9 {
			s.Kill(d)
		}
	}
	want, wantMoved := Merge(ti.segs, nil, 64, nil)
	dead := make([][]uint64, len(ti.segs))
	for i, s := range ti.segs {
		dead[i] = slices.Clone(s.DeadBits())
	}
	for _, s := range ti.segs {
		for d := uint32(4); d < uint32(s.Docs()); d += 7 {
			s.Kill(d)
		}
	}
	got, moved := Merge(ti.segs, dead, 64, nil)
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(moved, wantMoved) {
		t.Fatal("the merge of copied dead bits differs from the merge when they were copied")
	}
}

// A merge told to stop gives up (nil), at once or part-way through its
// terms.
func TestMergeStops(t *testing.T) {
	ti := newTestIndex()
	r := rand.New(rand.NewPCG(15, 16))
	ti.add(64, randomDocs(r, 3000)...)
	ti.add(64, passDocs(20000)...) // some 20,000 terms: several asks
	for _, after := range []int{0, 1, 3} {
		asked := 0
		m, moved := Merge(ti.segs, nil, 64, func() bool { asked++; return asked > after })
		if m != nil || moved != nil || asked != after+1 {
			t.Fatalf("stop after %d asks: merged %v, asked %d times", after, m != nil, asked)
		}
	}
	if m, _ := Merge(ti.segs, nil, 64, func() bool { return false }); m == nil {
		t.Fatal("a merge never told to stop gave up")
	}
}

// A segment MergeCandidates is told is fixed is never picked, and no run
// goes over it.
func TestMergeCandidatesLeaveFixed(t *testing.T) {
	var segs []*Segment
	for range MergeFactor + 1 {
		segs = append(segs, &Segment{key: make([]uint64, 10), dead: make([]uint64, 1)})
	}
	if got := MergeCandidates(segs[:MergeFactor], DefaultMergePolicy, nil); len(got) != MergeFactor {
		t.Fatalf("%d of %d tiny segments picked", len(got), MergeFactor)
	}
	if got := MergeCandidates(segs[:MergeFactor], DefaultMergePolicy, func(i int) bool { return i == 3 }); len(got) != 0 {
		t.Fatalf("%d segments picked over a fixed one", len(got))
	}
	got := MergeCandidates(segs, DefaultMergePolicy, func(i int) bool { return i == 0 })
	if len(got) != MergeFactor || got[0] != segs[1] {
		t.Fatalf("picked %d segments beside the fixed first", len(got))
	}
}

// A command merges the small segments of appends, not a first index's
// batches over its bound; of batches under it (a first index's are 2–11 MB
// at 1 GB), neighbours whose sum stays within 8 MiB, never more.
func TestCommandPolicyLeavesBatches(t *testing.T) {
	batches := slices.Repeat([]SegmentSize{{Bytes: 10 << 20, Docs: 300_000}}, 43)
	if lo, hi := CommandMergePolicy.Pick(batches); lo < hi {
		t.Fatalf("a command merges batches [%d, %d)", lo, hi)
	}
	appends := slices.Repeat([]SegmentSize{{Bytes: 2000, Docs: 20}}, MergeFactor)
	if lo, hi := CommandMergePolicy.Pick(append(batches, appends...)); hi-lo != MergeFactor {
		t.Fatalf("a command merges [%d, %d) of the appends' segments", lo, hi)
	}
	// Mixed batches of 2–11 MB: whatever a command merges until it picks
	// none, no merge's output is over 8 MiB and no batch over it is merged.
	rng := rand.New(rand.NewPCG(7, 7))
	for round := range 200 {
		var sizes []SegmentSize
		for range 43 {
			mb := 2 + rng.Int64N(10)
			sizes = append(sizes, SegmentSize{Bytes: mb << 20, Docs: int(mb) * 30_000})
		}
		for step := 0; ; step++ {
			lo, hi := CommandMergePolicy.Pick(sizes)
			if lo == hi {
				break
			}
			var out SegmentSize
			for _, z := range sizes[lo:hi] {
				if z.Bytes > CommandMergePolicy.MaxBytes {
					t.Fatalf("round %d: a command merges a batch of %d bytes", round, z.Bytes)
				}
				out.Bytes += z.Bytes
				out.Docs += z.Docs
			}
			if out.Bytes > CommandMergePolicy.MaxBytes {
				t.Fatalf("round %d: a command's merge of %d bytes", round, out.Bytes)
			}
			sizes = slices.Replace(sizes, lo, hi, out)
			if step > 43 {
				t.Fatalf("round %d: a command never stops merging", round)
			}
		}
	}
}
