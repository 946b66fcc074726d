package retriever

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"runls/masking"
)

// codecRun is a run with every kind of file state: records (fielded,
// unfielded, a pending last record), plain notes, a masked credential, a
// binary file, wide offsets and a long file.
func codecRun(t testing.TB) (*Index, string) {
	t.Helper()
	long := strings.Repeat("x", 70000) + " widepiece\n"
	run := writeRun(t, map[string]string{
		"episode-1/alice/alice.history": rec("c1", "deploy the app") + rec("c2", "token=abcdefghijklmnop1234 rotate") + "  continued line\n" + rec("c1", "pending"),
		"episode-1/alice/alice.log":     "2026-10-21 18:00:00,123 INFO  [running] [c3] started\nno record line\n2026-10-21 17:00:00,000 WARN  [running] [-] earlier\n",
		"episode-1/alice/notes.txt":     bigNotes(200 << 10),
		"episode-2/bob/notes.md":        "a note about apples\n" + long + "tail without newline",
		"episode-2/bob/blob.bin":        "bin\x00ary",
	})
	ix := openTest(t, Options{Root: run, Masker: masking.HidingOutside(run)})
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return ix, run
}

// Every segment and the state read back encode to the same bytes, and the
// files read back are the files encoded.
func TestPersistCodecRoundTrip(t *testing.T) {
	ix, _ := codecRun(t)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	st, place := ix.savedState()
	if len(ix.segments) == 0 || len(st.files) != 5 {
		t.Fatalf("%d segments, %d files", len(ix.segments), len(st.files))
	}
	var segs []*segment
	for _, s := range ix.segments {
		enc := encodeSegment(nil, s)
		dec, err := decodeSegment(enc, uint32(len(st.convs)), st.nextID)
		if err != nil {
			t.Fatal(err)
		}
		if again := encodeSegment(nil, dec); !bytes.Equal(again, enc) {
			t.Fatal("a segment read back encodes to other bytes")
		}
		for d := uint32(0); d < uint32(s.Docs()); d++ {
			if s.lineOf(d) != dec.lineOf(d) || s.startOf(d) != dec.startOf(d) || s.blenOf(d) != dec.blenOf(d) || s.convOf(d) != dec.convOf(d) {
				t.Fatalf("piece %d's columns differ", d)
			}
		}
		segs = append(segs, dec)
	}
	enc := encodeState(nil, st, place)
	blob, err := decodeState(enc)
	if err != nil {
		t.Fatal(err)
	}
	files, err := blob.fileStates(segs, ix.dict.Len())
	if err != nil {
		t.Fatal(err)
	}
	back := blob.savedIndex
	back.files = files
	newPlace := map[*segment]uint32{}
	for i, s := range segs {
		newPlace[s] = uint32(i)
	}
	if again := encodeState(nil, &back, newPlace); !bytes.Equal(again, enc) {
		t.Fatal("the state read back encodes to other bytes")
	}
	for i, f := range files {
		o := st.files[i]
		if f.rel != o.rel || f.episode != o.episode || f.epNum != o.epNum || f.form != o.form ||
			!bytes.Equal(f.head, o.head) || !bytes.Equal(f.window, o.window) || (f.tail == nil) != (o.tail == nil) {
			t.Errorf("file %s read back as %+v, was %+v", o.rel, f, o)
		}
	}
}

// fuzzSeeds are a real index's blobs, and what decoding them needs.
func fuzzSeeds(f *testing.F) (segBlobs [][]byte, state []byte, ix *Index) {
	ix, _ = codecRun(f)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	st, place := ix.savedState()
	for _, s := range ix.segments {
		segBlobs = append(segBlobs, encodeSegment(nil, s))
	}
	return segBlobs, encodeState(nil, st, place), ix
}

// FuzzDecodeSegmentBlob: no input panics the decoder or a lookup of what
// it accepts.
func FuzzDecodeSegmentBlob(f *testing.F) {
	segs, _, _ := fuzzSeeds(f)
	for _, b := range segs {
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeSegment(b, 1<<10, 1<<10)
		if err != nil {
			return
		}
		for d := uint32(0); d < uint32(s.Docs()); d++ {
			_, _, _, _, _ = s.lineOf(d), s.startOf(d), s.blenOf(d), s.convOf(d), s.fileOf(d)
			_, _ = s.masked.Get(d)
		}
	})
}

// FuzzDecodeState: no input panics the decoder, and what it accepts names
// only segments, pieces, terms and conversations that exist.
func FuzzDecodeState(f *testing.F) {
	segBlobs, state, ix := fuzzSeeds(f)
	var segs []*segment
	for _, b := range segBlobs {
		s, err := decodeSegment(b, 1<<10, 1<<10)
		if err != nil {
			f.Fatal(err)
		}
		segs = append(segs, s)
	}
	f.Add(state)
	f.Add(state[:len(state)/2])
	terms := ix.dict.Len()
	f.Fuzz(func(t *testing.T, b []byte) {
		blob, err := decodeState(b)
		if err != nil {
			return
		}
		files, err := blob.fileStates(segs, terms)
		if err != nil {
			return
		}
		for _, fs := range files {
			for _, r := range fs.ranges {
				for d := r.lo; d < r.hi; d++ {
					_ = r.seg.Dead(d)
				}
			}
			for _, td := range fs.tailDocs {
				_ = td.seg.Dead(td.doc)
			}
			_ = fs.records().Runs()
			_ = fs.records().TimeRuns()
			for i := range fs.records().Len() {
				_ = blob.convs[fs.records().Conv(i)]
			}
			for _, c := range fs.convs {
				_ = blob.convs[c]
			}
		}
	})
}
