package bm25

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"unsafe"
)

// testBacking checks the bytes of one encoding: it records what was
// checked, and panics with badBytes when a check reaches a byte in bad.
type testBacking struct {
	enc     []byte
	checked []bool
	bad     [][2]int // [from, to) ranges of enc
	all     int      // CheckAll calls
	checks  int      // Check calls
}

type badBytes struct{ off int }

func (k *testBacking) Check(p []byte) {
	k.checks++
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(p))) - uintptr(unsafe.Pointer(unsafe.SliceData(k.enc))))
	if off < 0 || off+len(p) > len(k.enc) {
		panic(fmt.Sprintf("checked bytes outside the encoding: %d+%d of %d", off, len(p), len(k.enc)))
	}
	for _, r := range k.bad {
		if off < r[1] && r[0] < off+len(p) {
			panic(badBytes{off})
		}
	}
	for i := off; i < off+len(p); i++ {
		k.checked[i] = true
	}
}

func (k *testBacking) CheckAll() {
	k.all++
	k.Check(k.enc)
}

func (k *testBacking) Corrupt(err error) { panic(err) }

// lazySegment encodes s with its index and reads it back lazily.
func lazySegment(t testing.TB, s *Segment, bad ...[2]int) (*Segment, *testBacking) {
	t.Helper()
	e := NewSectionEncoder(nil)
	s.Encode(e)
	e.PutIndex()
	k := &testBacking{enc: e.Bytes(), checked: make([]bool, len(e.Bytes())), bad: bad}
	d := NewSectionDecoder(k.enc)
	d.SetBacking(k)
	d.UseIndex()
	l := ReadSegmentLazy(d, k)
	if err := d.Finish(); err != nil {
		t.Fatal(err)
	}
	return l, k
}

// hitsOnly is hits without their segments' pointers.
func hitsOnly(hits []Hit) []Hit {
	out := slices.Clone(hits)
	for i := range out {
		out[i].seg = nil
	}
	return out
}

// rangeOf is where v's bytes lie in k's encoding.
func rangeOf[T any](k *testBacking, v []T) [2]int {
	if len(v) == 0 {
		panic("an empty range")
	}
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(v))) - uintptr(unsafe.Pointer(unsafe.SliceData(k.enc))))
	return [2]int{off, off + len(v)*int(unsafe.Sizeof(v[0]))}
}

// panicOf runs fn and gives what it panicked with (nil: nothing).
func panicOf(fn func()) (r any) {
	defer func() { r = recover() }()
	fn()
	return nil
}

// A segment read lazily answers every query as the one it was encoded
// from, its decode checks a small part of its bytes, and every byte it
// reads after is one it checked (the queries, then a merge and Encode,
// which check it whole).
func TestLazySegmentAnswersAsEncoded(t *testing.T) {
	ti := codecIndex(t)
	lazy := &testIndex{dict: ti.dict, stats: ti.stats, seed: ti.seed}
	var backs []*testBacking
	for _, s := range ti.segs {
		l, k := lazySegment(t, s)
		n := 0
		for _, c := range k.checked {
			if c {
				n++
			}
		}
		if n*4 > len(k.enc) {
			t.Errorf("the decode checked %d of %d bytes", n, len(k.enc))
		}
		lazy.segs, backs = append(lazy.segs, l), append(backs, k)
	}
	tune := DefaultTuning()
	tune.LayerMin = 64
	for _, q := range []string{"common", "often", "loud", "rare17", "mid3 often", "common often loud", "seg1 mid7", "rare2999 loud", "absent"} {
		for _, k := range []int{1, 10, 1000} {
			want := hitsOnly(ti.search(t, tune, q, -1, k, nil))
			if got := hitsOnly(lazy.search(t, tune, q, -1, k, nil)); !reflect.DeepEqual(got, want) {
				t.Errorf("%q top %d: lazy %v, want %v", q, k, got, want)
			}
		}
	}
	for i, s := range lazy.segs {
		sameSegment(t, ti.segs[i], s)
	}
	merged, _ := Merge(lazy.segs, nil, 64, nil)
	want, _ := Merge(ti.segs, nil, 64, nil)
	sameSegment(t, want, merged)
	for i, k := range backs {
		if k.all == 0 {
			t.Errorf("segment %d: merged without CheckAll", i)
		}
	}
	if !slices.Equal(lazy.segs[0].AppendEncoded(nil), ti.segs[0].AppendEncoded(nil)) {
		t.Error("a lazy segment encodes otherwise")
	}
}

// Each part of a lazily read segment a search reads, found bad after the
// decode: the search that reads it stops with the backing's panic, not an
// answer; a search that does not read it answers. Reading a segment whole
// (Merge, Encode, Stats.Drop) checks it whole first.
func TestLazySegmentChecksBeforeUse(t *testing.T) {
	ti := codecIndex(t)
	src := ti.segs[0]
	tune := DefaultTuning()
	tune.LayerMin = 64
	termOf := func(w string) int {
		id := ti.dict.Lookup([]string{w})
		if len(id) != 1 {
			t.Fatalf("no term %q", w)
		}
		i := src.termIndex(id[0])
		if i < 0 {
			t.Fatalf("%q is not in the segment", w)
		}
		return i
	}
	splitTerm, denseTerm := "", ""
	for _, w := range []string{"common", "often", "pad1", "pad2", "seg0", "loud"} {
		m := src.meta[termOf(w)]
		if m.flags&metaSplit != 0 && splitTerm == "" {
			splitTerm = w
		}
		if m.flags&metaDense != 0 && denseTerm == "" {
			denseTerm = w
		}
	}
	if splitTerm == "" || denseTerm == "" {
		t.Fatalf("no split (%q) or dense (%q) term", splitTerm, denseTerm)
	}
	top := ti.search(t, tune, "rare17", -1, 1, nil)
	if len(top) != 1 || top[0].Seg != 0 {
		t.Fatalf("rare17's hit: %v", top)
	}
	type place struct {
		name  string
		bad   func(s *Segment, k *testBacking) [2]int
		query string // a search that reads the part
	}
	postings := func(w string) func(s *Segment, k *testBacking) [2]int {
		return func(s *Segment, k *testBacking) [2]int {
			i := termOf(w)
			return rangeOf(k, s.post[s.meta[i].off:s.meta[i+1].off])
		}
	}
	for _, p := range []place{
		{"a term's postings", postings("rare17"), "rare17"},
		{"a split term's postings", postings(splitTerm), splitTerm},
		{"a term's skips", func(s *Segment, k *testBacking) [2]int {
			i := termOf("common")
			return rangeOf(k, s.skips[s.meta[i].skipOff:s.meta[i+1].skipOff])
		}, "common"},
		{"a term's entry", func(s *Segment, k *testBacking) [2]int {
			i := termOf("mid3")
			return rangeOf(k, s.meta[i:i+1])
		}, "mid3"},
		{"a run of terms", func(s *Segment, k *testBacking) [2]int {
			i := termOf("rare17")
			return rangeOf(k, s.terms[i:i+1])
		}, "rare17"},
		{"a split term's lengths", func(s *Segment, k *testBacking) [2]int {
			return rangeOf(k, s.layers.Ptr(uint32(termOf(splitTerm))).dl)
		}, splitTerm},
		{"a dense term's bits", func(s *Segment, k *testBacking) [2]int {
			return rangeOf(k, s.dense.Ptr(uint32(termOf(denseTerm))).bits)
		}, denseTerm},
		{"a dense term's windows", func(s *Segment, k *testBacking) [2]int {
			return rangeOf(k, s.dense.Ptr(uint32(termOf(denseTerm))).winMax)
		}, denseTerm},
		{"the lengths", func(s *Segment, k *testBacking) [2]int { return rangeOf(k, s.dl) }, "rare5"},
		{"a hit's key", func(s *Segment, k *testBacking) [2]int { return rangeOf(k, s.key[top[0].Doc:top[0].Doc+1]) }, "rare17"},
	} {
		t.Run(p.name, func(t *testing.T) {
			// Where the part lies in one encoding is where it lies in
			// the next: the encoding is the same bytes.
			l0, k0 := lazySegment(t, src)
			l, _ := lazySegment(t, src, p.bad(l0, k0))
			lazy := &testIndex{dict: ti.dict, stats: ti.stats, seed: ti.seed, segs: []*Segment{l}}
			if r := panicOf(func() { lazy.search(t, tune, "absent seg1", -1, 10, nil) }); r != nil {
				t.Fatalf("a search that does not read the part panicked: %v", r)
			}
			r := panicOf(func() { lazy.search(t, tune, p.query, -1, 10, nil) })
			if _, ok := r.(badBytes); !ok {
				t.Fatalf("search %q: panicked with %v, want the backing's", p.query, r)
			}
		})
	}
	for name, whole := range map[string]func(s *Segment){
		"Merge":  func(s *Segment) { Merge([]*Segment{s}, nil, 64, nil) },
		"Encode": func(s *Segment) { s.AppendEncoded(nil) },
		"Drop":   func(s *Segment) { st := ti.stats; st.Drop(0, s, 0, 1) },
	} {
		t.Run(name, func(t *testing.T) {
			l0, k0 := lazySegment(t, src)
			l, _ := lazySegment(t, src, rangeOf(k0, l0.post[len(l0.post)/2:len(l0.post)/2+1]))
			if r := panicOf(func() { whole(l) }); !reflect.TypeOf(r).AssignableTo(reflect.TypeOf(badBytes{})) {
				t.Fatalf("panicked with %v, want the backing's", r)
			}
		})
	}
}

// A key read is checked with its range of keys, once: the backing is
// asked once a range however many of its keys are read (a search reads one
// for every hit a heap takes, issue 33), and a bad byte in a range stops
// the read of any of its keys, never of another range's.
func TestLazySegmentChecksKeysByRange(t *testing.T) {
	ti := codecIndex(t)
	src := ti.segs[0]
	l, k := lazySegment(t, src)
	n := uint32(1) << l.keyShift
	if n != keysPerCheck || src.Docs() <= 2*int(n) {
		t.Fatalf("%d documents, ranges of %d keys: want three ranges of %d at least", src.Docs(), n, keysPerCheck)
	}
	before := k.checks
	for range 2 {
		for d := range uint32(l.Docs()) {
			if l.Key(d) != src.Key(d) {
				t.Fatalf("key %d: %#x, want %#x", d, l.Key(d), src.Key(d))
			}
		}
	}
	ranges := (l.Docs() + int(n) - 1) / int(n)
	if c := k.checks - before; c != ranges {
		t.Errorf("%d keys read twice: %d checks, want one a range (%d)", l.Docs(), c, ranges)
	}
	keys := rangeOf(k, l.key)
	for i := keys[0]; i < keys[1]; i++ {
		if !k.checked[i] {
			t.Fatalf("key byte %d read unchecked", i-keys[0])
		}
	}

	bad := n + 7 // in the second range
	l0, k0 := lazySegment(t, src)
	l, _ = lazySegment(t, src, rangeOf(k0, l0.key[bad:bad+1]))
	for _, c := range []struct {
		d   uint32
		bad bool
	}{{0, false}, {n - 1, false}, {n, true}, {bad, true}, {2*n - 1, true}, {bad, true}, {2 * n, false}} {
		r := panicOf(func() { l.Key(c.d) })
		if _, ok := r.(badBytes); ok != c.bad || (r != nil && !ok) {
			t.Errorf("key %d: panicked with %v, want the backing's: %v", c.d, r, c.bad)
		}
	}
}

// A segment's keys fall in keyRanges ranges at most, each of keysPerCheck
// keys or a power of two times: at most a backing's chunk (64 KiB, 8192
// keys) up to 2M documents.
func TestKeyShiftFor(t *testing.T) {
	for _, c := range []struct {
		docs int
		keys int // a range's
	}{
		{0, 512}, {1, 512}, {3000, 512}, {256 * 512, 512}, {256*512 + 1, 1024},
		{256 * 1024, 1024}, {2 << 20, 8192}, {2<<20 + 1, 16384},
	} {
		sh := keyShiftFor(c.docs)
		if 1<<sh != c.keys {
			t.Errorf("%d documents: ranges of %d keys, want %d", c.docs, 1<<sh, c.keys)
		}
		if c.docs > 0 && (c.docs-1)>>sh >= keyRanges {
			t.Errorf("%d documents: range %d of %d", c.docs, (c.docs-1)>>sh, keyRanges)
		}
	}
}

// A term's values found wrong at its first use, in bytes that passed the
// check: the backing's Corrupt, never a read out of range.
func TestLazySegmentCorruptValues(t *testing.T) {
	ti := codecIndex(t)
	src := ti.segs[0]
	i := src.termIndex(ti.dict.Lookup([]string{"rare17"})[0])
	e := NewSectionEncoder(nil)
	src.Encode(e)
	e.PutIndex()
	enc := e.Bytes()
	k := &testBacking{enc: enc, checked: make([]bool, len(enc))}
	d := NewSectionDecoder(enc)
	d.SetBacking(k)
	d.UseIndex()
	l := ReadSegmentLazy(d, k)
	if err := d.Finish(); err != nil {
		t.Fatal(err)
	}
	l.meta[i+1].off = uint32(len(l.post) + 1) // as a flipped byte would make it
	r := panicOf(func() { l.EachPosting(l.terms[i], func(uint32, uint32) {}) })
	if err, ok := r.(error); !ok || !errors.Is(err, ErrSegmentFormat) {
		t.Fatalf("panicked with %v, want the backing's Corrupt", r)
	}
}

// acceptBacking takes every byte as checked (the bytes of a fuzz input
// have no sums): what is left to catch is a value that indexes nothing.
type acceptBacking struct{}

type corruptValue struct{ err error }

func (acceptBacking) Check([]byte)      {}
func (acceptBacking) CheckAll()         {}
func (acceptBacking) Corrupt(err error) { panic(corruptValue{err}) }

// FuzzReadSegmentLazy: no input panics the lazy decoder, nor a term's or a
// document's first use of what it accepts, but with the backing's Corrupt.
func FuzzReadSegmentLazy(f *testing.F) {
	ti := newTestIndex()
	s := ti.add(2, testDoc{text: "alpha beta alpha"}, testDoc{text: "beta gamma"}, testDoc{text: "beta beta beta delta"})
	e := NewSectionEncoder(nil)
	s.Encode(e)
	e.PutIndex()
	f.Add(e.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		d := NewSectionDecoder(b)
		if d.copied {
			return // a lazy read takes its bytes in place
		}
		d.SetBacking(acceptBacking{})
		d.UseIndex()
		l := ReadSegmentLazy(d, acceptBacking{})
		if d.Finish() != nil {
			return
		}
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(corruptValue); !ok {
					panic(r)
				}
			}
		}()
		var buf [2]list
		for i := range l.terms {
			l.lists(i, &buf)
		}
		for doc := range uint32(l.Docs()) {
			l.Key(doc)
			l.Len(doc)
			l.Group(doc)
		}
	})
}
