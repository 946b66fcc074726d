package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func randomTable(r *rand.Rand, n int) []FileRecord {
	var t []FileRecord
	seen := map[string]bool{}
	for len(t) < n {
		p := fmt.Sprintf("episode-%d/agent-%d/%s.log", r.IntN(5), r.IntN(4), strings.Repeat("x", r.IntN(6))+fmt.Sprint(r.IntN(1000)))
		if r.IntN(5) == 0 {
			p = fmt.Sprintf("notes-%d.md", r.IntN(100))
		}
		if seen[p] {
			continue
		}
		seen[p] = true
		size := r.Int64N(1 << 40)
		to := r.Int64N(size + 1)
		rec := FileRecord{
			Path: p, Dev: r.Uint64(), Ino: r.Uint64(), Size: size,
			ModTime: r.Int64() - r.Int64(), IndexedTo: to,
		}
		if to > 0 {
			head := make([]byte, r.IntN(int(min(to, 64)))+1)
			rec.Head = FingerprintOf(head)
			rec.Tail = Fingerprint{Len: uint32(r.Int64N(min(to, 1<<20)) + 1), Sum: [16]byte{byte(r.Uint32())}}
		}
		if r.IntN(2) == 0 {
			rec.Carry = []byte(strings.Repeat("c", r.IntN(40)))
		}
		t = append(t, rec)
	}
	return t
}

func TestFileTableRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 50, 500} {
		table := randomTable(r, n)
		enc, err := EncodeFileTable(table)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeFileTable(enc)
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Clone(table)
		slices.SortFunc(want, func(a, b FileRecord) int { return strings.Compare(a.Path, b.Path) })
		if !reflect.DeepEqual(normTable(got), normTable(want)) {
			t.Fatalf("%d records: round trip differs", n)
		}
	}
}

// TestFileTableRules: records Encode refuses, and the same rules refused
// by Decode (on bytes Encode would not write).
func TestFileTableRules(t *testing.T) {
	ok := FileRecord{Path: "episode-1/a/x.log", Size: 10, IndexedTo: 8, Head: FingerprintOf([]byte("ab"))}
	bad := map[string]func(*FileRecord){
		"absolute path":    func(r *FileRecord) { r.Path = "/etc/passwd" },
		"dot-dot":          func(r *FileRecord) { r.Path = "episode-1/../../x" },
		"empty path":       func(r *FileRecord) { r.Path = "" },
		"dot":              func(r *FileRecord) { r.Path = "." },
		"trailing slash":   func(r *FileRecord) { r.Path = "a/" },
		"NUL":              func(r *FileRecord) { r.Path = "a\x00b" },
		"past the end":     func(r *FileRecord) { r.IndexedTo = 11 },
		"negative size":    func(r *FileRecord) { r.Size = -1; r.IndexedTo = -1 },
		"head past offset": func(r *FileRecord) { r.Head.Len = 9 },
		"tail past offset": func(r *FileRecord) { r.Tail = Fingerprint{Len: 9, Sum: [16]byte{1}} },
		"empty with a sum": func(r *FileRecord) { r.Tail = Fingerprint{Sum: [16]byte{1}} },
	}
	if _, err := EncodeFileTable([]FileRecord{ok}); err != nil {
		t.Fatal(err)
	}
	for name, edit := range bad {
		r := ok
		edit(&r)
		if _, err := EncodeFileTable([]FileRecord{r}); err == nil {
			t.Errorf("%s: encoded", name)
		}
		if _, err := DecodeFileTable(encodeUnchecked([]FileRecord{r})); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: decoded: %v", name, err)
		}
	}
	if _, err := EncodeFileTable([]FileRecord{ok, ok}); err == nil {
		t.Error("a path twice encoded")
	}
	if _, err := DecodeFileTable(encodeUnchecked([]FileRecord{ok, ok})); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a path twice decoded: %v", err)
	}
	two := []FileRecord{ok, ok}
	two[1].Path = "a"
	if _, err := DecodeFileTable(encodeUnchecked(two)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("out of order decoded: %v", err)
	}
	enc, _ := EncodeFileTable([]FileRecord{ok})
	for n := 0; n < len(enc); n++ {
		if _, err := DecodeFileTable(enc[:n]); err == nil {
			t.Errorf("cut to %d decoded", n)
		}
	}
	if _, err := DecodeFileTable(append(bytes.Clone(enc), 0)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("trailing byte: %v", err)
	}
	// A name that is not UTF-8 is a Linux file name like any other: its
	// table round-trips (fs.ValidPath refused it, and with it the run's
	// whole cache entry).
	odd := ok
	odd.Path = "episode-1/a/bad-\xff\xfe.md"
	enc, err := EncodeFileTable([]FileRecord{odd})
	if err != nil {
		t.Fatalf("a name not UTF-8: %v", err)
	}
	if got, err := DecodeFileTable(enc); err != nil || len(got) != 1 || got[0].Path != odd.Path {
		t.Errorf("a name not UTF-8 decoded as %+v, %v", got, err)
	}
}

// ValidFilePath is fs.ValidPath without its UTF-8 rule and "." (the run
// folder is no file): the same answer on every UTF-8 path, and an invalid
// one's answer that of the same path with its bad bytes made a letter.
func FuzzValidFilePath(f *testing.F) {
	for _, p := range []string{"a", "a/b", "/a", "a/", "a//b", ".", "..", "a/./b", "a/../b", "a\x00b", "\xff", "a/\xff\xfe.md", "..a/b.", "a\\b", "é/ü"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got := ValidFilePath(p)
		if utf8.ValidString(p) {
			if want := fs.ValidPath(p) && p != "." && !strings.ContainsRune(p, 0); got != want {
				t.Fatalf("ValidFilePath(%q) = %v, fs.ValidPath's rules say %v", p, got, want)
			}
			return
		}
		if want := ValidFilePath(strings.ToValidUTF8(p, "x")); got != want {
			t.Fatalf("ValidFilePath(%q) = %v, with its bad bytes made a letter %v", p, got, want)
		}
	})
}

func TestFingerprintOf(t *testing.T) {
	if FingerprintOf(nil) != (Fingerprint{}) {
		t.Error("fingerprint of nothing is not the zero value")
	}
	a, b := FingerprintOf([]byte("abc")), FingerprintOf([]byte("abd"))
	if a == b || a.Len != 3 {
		t.Errorf("%v %v", a, b)
	}
}

// FuzzDecodeFileTable: no input panics; a table that decodes encodes to
// one that decodes the same.
func FuzzDecodeFileTable(f *testing.F) {
	enc, _ := EncodeFileTable(randomTable(rand.New(rand.NewPCG(3, 4)), 5))
	f.Add(enc)
	f.Add([]byte{fileTableVersion, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		table, err := DecodeFileTable(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v is neither ErrCorrupt nor ErrFormat", err)
			}
			return
		}
		enc, err := EncodeFileTable(table)
		if err != nil {
			t.Fatalf("decoded table does not encode: %v", err)
		}
		again, err := DecodeFileTable(enc)
		if err != nil || !reflect.DeepEqual(normTable(again), normTable(table)) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// encodeUnchecked writes records as EncodeFileTable would, in the given
// order and without its checks: bytes a corrupt cache could hold.
func encodeUnchecked(records []FileRecord) []byte {
	out := []byte{fileTableVersion, byte(len(records))}
	prev := ""
	for _, r := range records {
		shared := sharedPrefix(prev, r.Path)
		out = append(out, byte(shared))
		out = appendBytes(out, []byte(r.Path[shared:]))
		out = append(out, 0, 0) // dev, ino
		out = appendUvarint(out, uint64(r.Size))
		out = append(out, 0) // mtime
		out = appendUvarint(out, uint64(r.IndexedTo))
		out = appendFingerprintUnchecked(out, r.Head)
		out = appendFingerprintUnchecked(out, r.Tail)
		out = appendBytes(out, r.Carry)
		prev = r.Path
	}
	return out
}

func appendFingerprintUnchecked(b []byte, f Fingerprint) []byte {
	b = appendUvarint(b, uint64(f.Len))
	if f.Len == 0 && f.Sum == [16]byte{} {
		return b
	}
	if f.Len == 0 {
		// A zero length with a sum: write a length of 0 and let the sum
		// bytes trail, which the decoder must refuse too.
		return append(b, f.Sum[:]...)
	}
	return append(b, f.Sum[:]...)
}

func normTable(t []FileRecord) []FileRecord {
	t = slices.Clone(t)
	for i := range t {
		if len(t[i].Carry) == 0 {
			t[i].Carry = nil
		}
	}
	if len(t) == 0 {
		return nil
	}
	return t
}
