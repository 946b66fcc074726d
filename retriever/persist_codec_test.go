package retriever

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"runls/masking"
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/persist"
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
// files read back are the files encoded, with nothing of the blob's bytes
// they were read from (a reopen frees the blob's heap copy: they are
// overwritten here once the files are made); a note keeps no memo and no
// warnings, a record file both.
func TestPersistCodecRoundTrip(t *testing.T) {
	ix, _ := codecRun(t)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	st, place := persist.Save(&ix.state)
	if len(ix.state.Segments) == 0 || len(st.Files) != 5 {
		t.Fatalf("%d segments, %d files", len(ix.state.Segments), len(st.Files))
	}
	var segs []*corpus.Segment
	for _, s := range ix.state.Segments {
		enc := persist.EncodeSegment(nil, s)
		dec, err := persist.DecodeSegment(enc, uint32(len(st.Convs)), st.NextID)
		if err != nil {
			t.Fatal(err)
		}
		if again := persist.EncodeSegment(nil, dec); !bytes.Equal(again, enc) {
			t.Fatal("a segment read back encodes to other bytes")
		}
		for d := uint32(0); d < uint32(s.Docs()); d++ {
			if s.LineOf(d) != dec.LineOf(d) || s.StartOf(d) != dec.StartOf(d) || s.BlenOf(d) != dec.BlenOf(d) || s.ConvOf(d) != dec.ConvOf(d) {
				t.Fatalf("piece %d's columns differ", d)
			}
		}
		segs = append(segs, dec)
	}
	enc := persist.EncodeState(nil, st, place)
	read := bytes.Clone(enc)
	blob, err := persist.DecodeState(read)
	if err != nil {
		t.Fatal(err)
	}
	files, err := blob.FileStates(segs, ix.state.Dict.Len(), fileRules())
	if err != nil {
		t.Fatal(err)
	}
	for i := range read {
		read[i] = 0xa5
	}
	back := blob.Saved
	back.Files = files
	back.Dead = st.Dead // the blob's own (a segment copies them: SetDeadBits)
	newPlace := map[*corpus.Segment]uint32{}
	for i, s := range segs {
		newPlace[s] = uint32(i)
	}
	if again := persist.EncodeState(nil, &back, newPlace); !bytes.Equal(again, enc) {
		t.Fatal("the state read back encodes to other bytes")
	}
	for i, f := range files {
		o := st.Files[i]
		if f.Rel != o.Rel || f.Episode() != o.Episode() || f.EpNum() != o.EpNum() || f.Form != o.Form ||
			f.Head != o.Head || f.Window != o.Window || (f.Tail() == nil) != (o.Tail() == nil) {
			t.Errorf("file %s read back as %+v, was %+v", o.Rel, f, o)
		}
		if rec := f.Form.IsRecord(); (f.Memo() != nil) != rec || (f.Warned() != nil) != rec || (o.Memo() != nil) != rec || (o.Warned() != nil) != rec {
			t.Errorf("file %s: memo %v, warnings %v, read back memo %v, warnings %v", o.Rel, o.Memo() != nil, o.Warned() != nil, f.Memo() != nil, f.Warned() != nil)
		}
	}
}

// fuzzSeeds are a real index's blobs, and what decoding them needs.
func fuzzSeeds(f *testing.F) (segBlobs [][]byte, state []byte, ix *Index) {
	ix, _ = codecRun(f)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	st, place := persist.Save(&ix.state)
	for _, s := range ix.state.Segments {
		segBlobs = append(segBlobs, persist.EncodeSegment(nil, s))
	}
	return segBlobs, persist.EncodeState(nil, st, place), ix
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
		s, err := persist.DecodeSegment(b, 1<<10, 1<<10)
		if err != nil {
			return
		}
		for d := uint32(0); d < uint32(s.Docs()); d++ {
			_, _, _, _, _ = s.LineOf(d), s.StartOf(d), s.BlenOf(d), s.ConvOf(d), s.FileOf(d)
			_, _ = s.Masked.Get(d)
		}
	})
}

// stateFuzzSeeds adds a state blob and its first half to f's corpus, and
// returns the segments and the count of terms it names.
func stateFuzzSeeds(f *testing.F) ([]*corpus.Segment, int) {
	segBlobs, state, ix := fuzzSeeds(f)
	var segs []*corpus.Segment
	for _, b := range segBlobs {
		s, err := persist.DecodeSegment(b, 1<<10, 1<<10)
		if err != nil {
			f.Fatal(err)
		}
		segs = append(segs, s)
	}
	f.Add(state)
	f.Add(state[:len(state)/2])
	terms := ix.state.Dict.Len()
	return segs, terms
}

// FuzzDecodeState: no input panics the decoder, and what it accepts names
// only segments, pieces, terms and conversations that exist.
func FuzzDecodeState(f *testing.F) {
	segs, terms := stateFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		blob, err := persist.DecodeState(b)
		if err != nil {
			return
		}
		files, err := blob.FileStates(segs, terms, fileRules())
		if err != nil {
			return
		}
		for _, fs := range files {
			for _, r := range fs.Ranges {
				for d := r.Lo; d < r.Hi; d++ {
					_ = r.Seg.Dead(d)
				}
			}
			for _, td := range fs.TailDocs() {
				_ = td.Seg.Dead(td.Doc)
			}
			_ = fs.Records().Runs()
			_ = fs.Records().TimeRuns()
			for i := range fs.Records().Len() {
				_ = blob.Convs[fs.Records().Conv(i)]
			}
			for _, c := range fs.Convs() {
				_ = blob.Convs[c]
			}
		}
	})
}

// FuzzDecodeStateInPlace: the reopen's decode, which leaves the files'
// line indexes and record tables in the blob and checks their values at
// their first use (internal/persist/inplace.go), never panics, and agrees
// with the eager decode (every value checked at once): where neither finds
// a fault, the files' columns are the same; where the eager one refuses a
// file's values, the in-place one finds the failure at that file's first use.
func FuzzDecodeStateInPlace(f *testing.F) {
	segs, terms := stateFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		b = append(make([]byte, 0, len(b)+8), b...) // 8-byte aligned, as a mapping is
		blob, err := persist.DecodeStateInPlace(b)
		if err != nil {
			return
		}
		files, err := blob.FileStates(segs, terms, fileRules())
		if err != nil {
			return
		}
		var got []string
		for _, fs := range files {
			t := fs.Records()
			for i := range t.Len() {
				_ = blob.Convs[t.Conv(i)]
			}
			got = append(got, columnsOf(fs))
		}
		eager, err := persist.DecodeState(b)
		if err != nil {
			t.Fatalf("the eager decode refuses what the in-place one read: %v", err)
		}
		want, err := eager.FileStates(segs, terms, fileRules())
		if failed := blob.ColumnsFailed(); failed != nil || err != nil {
			if failed == nil || err == nil {
				t.Fatalf("the in-place decode found %v, the eager one %v", failed, err)
			}
			return
		}
		for i, fs := range want {
			if g, w := got[i], columnsOf(fs); g != w {
				t.Fatalf("file %d: the in-place columns differ from the eager ones:\n%s\n%s", i, g, w)
			}
		}
	})
}

// columnsOf is a file's line index and record table as read through their
// lookups.
func columnsOf(fs *corpus.File) string {
	var sb strings.Builder
	t := fs.Records()
	fmt.Fprint(&sb, fs.Lines(), t.Len(), t.Lines(), t.EndUnits(), t.Runs(), t.TimeRuns(), t.Spans())
	for i := range t.Len() {
		fmt.Fprint(&sb, " ", t.Line(i), t.Time(i), t.Conv(i), t.Meta(i), t.Last(i))
	}
	return sb.String()
}

// A state blob whose files repeat an id or a path, or are not in the order
// the writer stores them (sorted by path, which the check of repeated paths
// relies on), is refused.
func TestDecodeStateRefusesRepeatedFiles(t *testing.T) {
	ix, _ := codecRun(t)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var segs []*corpus.Segment
	st, place := persist.Save(&ix.state)
	for _, s := range ix.state.Segments {
		dec, err := persist.DecodeSegment(persist.EncodeSegment(nil, s), uint32(len(st.Convs)), st.NextID)
		if err != nil {
			t.Fatal(err)
		}
		segs = append(segs, dec)
	}
	f0, f1 := st.Files[0], st.Files[1]
	for _, c := range []struct {
		name, want string
		edit       func() (undo func())
	}{
		{"as saved", "", func() func() { return func() {} }},
		{"out of order", "path", func() func() {
			st.Files[0], st.Files[1] = f1, f0
			return func() { st.Files[0], st.Files[1] = f0, f1 }
		}},
		{"a file twice", "id", func() func() {
			st.Files[1] = f0
			return func() { st.Files[1] = f1 }
		}},
		{"an id twice", "id", func() func() {
			id := f1.ID
			f1.ID = f0.ID
			return func() { f1.ID = id }
		}},
		{"a path twice", "path", func() func() {
			rel := f1.Rel
			f1.Rel = f0.Rel
			return func() { f1.Rel = rel }
		}},
	} {
		undo := c.edit()
		enc := persist.EncodeState(nil, st, place)
		undo()
		blob, err := persist.DecodeState(enc)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, err = blob.FileStates(segs, ix.state.Dict.Len(), fileRules())
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), "file 1: "+c.want)):
			t.Errorf("%s: %v, want file 1's %s refused", c.name, err, c.want)
		}
	}
}

// TestFileStatesAllocations: a state blob's notes are made into file states
// in a number of allocations that does not grow with the notes (issue 33:
// one allocation a file was a size class's rounding and a header each, at
// 100,000 files some 2 MB): the states, their paths, ranges and short line
// indexes are each one allocation for all files.
func TestFileStatesAllocations(t *testing.T) {
	const notes = 400
	files := map[string]string{}
	for i := range notes {
		files[fmt.Sprintf("episode-1/alice/note-%03d.md", i)] = fmt.Sprintf("a note about deploy %d\nand its second line\n", i)
	}
	ix := openTest(t, Options{Root: writeRun(t, files)})
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ix.mu.RLock()
	st, place := persist.Save(&ix.state)
	enc := persist.EncodeState(nil, st, place)
	segs, terms := ix.state.Segments, ix.state.Dict.Len()
	ix.mu.RUnlock()
	if len(st.Files) != notes {
		t.Fatalf("%d files", len(st.Files))
	}
	allocs := testing.AllocsPerRun(3, func() {
		blob, err := persist.DecodeState(enc)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := blob.FileStates(segs, terms, fileRules()); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > notes/4 {
		t.Errorf("%.0f allocations for %d notes' states, want at most %d", allocs, notes, notes/4)
	}
}

// TestRestoreTakesSummedPaths: a restore reads the state blob's paths once
// their bytes were checked against the entry's checksums, and takes them
// as the writer wrote them, none checked again as if from outside (issue
// 33: 8% of a command's reopen at 100,000 files); a byte of a path flipped
// in the entry is refused by the checksum (the run indexed afresh, the
// answers a fresh index's); a state blob no checksum covers has every path
// checked, and one with a ".." part is refused.
func TestRestoreTakesSummedPaths(t *testing.T) {
	ix, run := codecRun(t)
	root := cacheRoot(t)
	first, _ := reopened(t, Options{Root: run}, root)
	must(t, first.Close())
	again, restored := reopened(t, Options{Root: run}, root)
	if !restored {
		t.Fatal("not restored")
	}
	if n := again.cache.PathsValidated(); n != 0 {
		t.Errorf("the restore checked %d paths as if from outside, want none", n)
	}
	dir := again.cache.Entry().Dir()
	must(t, again.Close()) // which may commit again: the state blob is looked for after
	blobs, err := filepath.Glob(filepath.Join(dir, "*.blob"))
	must(t, err)
	flippedIn := 0
	for _, name := range blobs {
		b, err := os.ReadFile(name)
		must(t, err)
		if at := bytes.Index(b, []byte("episode-2/bob/notes.md")); at >= 0 {
			b[at+len("episode-2/bob/n")] = 'X'
			must(t, os.WriteFile(name, b, 0o644))
			flippedIn++
		}
	}
	if flippedIn != 1 {
		t.Fatalf("the path in %d blobs of %d, want the state blob's", flippedIn, len(blobs))
	}
	flipped, restored := reopened(t, Options{Root: run}, root)
	if restored {
		t.Error("a state blob with a path's byte flipped was restored")
	}
	assertSameAnswers(t, flipped, Options{Root: run})
	must(t, flipped.Close())

	ix.mu.RLock()
	defer ix.mu.RUnlock()
	st, place := persist.Save(&ix.state)
	var segs []*corpus.Segment
	for _, s := range ix.state.Segments {
		dec, err := persist.DecodeSegment(persist.EncodeSegment(nil, s), uint32(len(st.Convs)), st.NextID)
		must(t, err)
		segs = append(segs, dec)
	}
	enc := persist.EncodeState(nil, st, place)
	blob, err := persist.DecodeState(bytes.Clone(enc))
	must(t, err)
	if _, err := blob.FileStates(segs, ix.state.Dict.Len(), fileRules()); err != nil || blob.PathsValidated() != len(st.Files) {
		t.Errorf("a blob no checksum covers: %d of %d paths checked, %v", blob.PathsValidated(), len(st.Files), err)
	}
	// "notes.txt" as "z/../.txt": after the path before it, of its
	// episode and agent, in a folder of the agent's, but no path.
	bad := bytes.Replace(enc, []byte("episode-1/alice/notes.txt"), []byte("episode-1/alice/z/../.txt"), 1)
	if bytes.Equal(bad, enc) {
		t.Fatal("no path replaced")
	}
	for name, decode := range map[string]func([]byte) (*persist.StateBlob, error){"DecodeState": persist.DecodeState, "DecodeStateInPlace": persist.DecodeStateInPlace} {
		blob, err := decode(bytes.Clone(bad))
		must(t, err)
		if _, err := blob.FileStates(segs, ix.state.Dict.Len(), fileRules()); err == nil || !strings.Contains(err.Error(), "path") {
			t.Errorf("%s: a path with a \"..\" part: %v", name, err)
		}
	}
}
