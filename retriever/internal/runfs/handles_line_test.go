package runfs

import (
	"bytes"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"testing"
)

// lineByReadAt is LineMapped's brute force: the file read whole with
// F.ReadAt, the line found by counting line ends from off, then len(p)
// bytes from its start (to its "\n" when toLineEnd); false where the line
// or the bytes lie past the file's end (LineMapped's caller reads those);
// and the offset past the last byte the line's read needs.
func lineByReadAt(t *testing.T, h *Handle, off int64, skip, want int, toLineEnd bool) ([]byte, int64, bool) {
	t.Helper()
	info, err := h.F.Stat()
	if err != nil {
		t.Fatal(err)
	}
	all := make([]byte, info.Size())
	if n, err := h.F.ReadAt(all, 0); n != len(all) {
		t.Fatal(err)
	}
	if off > int64(len(all)) {
		return nil, 0, false
	}
	b := all[off:]
	start := 0
	for range skip {
		i := bytes.IndexByte(b[start:], '\n')
		if i < 0 {
			return nil, 0, false
		}
		start += i + 1
	}
	end := start + want
	if toLineEnd {
		if i := bytes.IndexByte(b[start:min(end, len(b))], '\n'); i >= 0 {
			end = start + i + 1
		}
	}
	if end > len(b) {
		return nil, 0, false
	}
	return b[start:end], off + int64(end), true
}

// mapNow makes h's mapping (at its second read) and fails when none was
// made; it skips the test on a system that maps no file.
func mapNow(t *testing.T, h *Handle) {
	t.Helper()
	if !mapsFiles {
		t.Skip("no mapping on this system")
	}
	for range 2 {
		if _, err := h.ReadMapped(make([]byte, 1), 0); err != nil {
			t.Fatal(err)
		}
	}
	if h.m.Load() == nil {
		t.Fatal("nothing was mapped")
	}
}

// lineAt finds the line skip line ends on and copies what F.ReadAt would
// read of it, or says it cannot: at a block's first line, in its middle,
// its last, the file's last line without a line end, a CRLF line (its
// "\r" is the line's: the caller trims it), past the end, and a NUL before
// or in the bytes copied.
func TestLineAt(t *testing.T) {
	text := []byte("first\nsecond line\r\nthird\n\nfifth, the last without an end")
	for _, c := range []struct {
		name      string
		b         []byte
		skip      int
		want      int
		toLineEnd bool
		got       string
		ok        bool
	}{
		{"the block's first line", text, 0, 5, false, "first", true},
		{"want past the line: the next lines' bytes", text, 0, 9, false, "first\nsec", true},
		{"to the line's end", text, 0, 9, true, "first\n", true},
		{"a CRLF line, whole", text, 1, 64, true, "second line\r\n", true},
		{"a CRLF line, its start", text, 1, 6, false, "second", true},
		{"in the middle", text, 2, 5, false, "third", true},
		{"an empty line", text, 3, 1, true, "\n", true},
		{"an empty line, nothing wanted", text, 3, 0, false, "", true},
		{"the last line without an end, within it", text, 4, 5, false, "fifth", true},
		{"the last line whole, exactly", text, 4, 30, false, "fifth, the last without an end", true},
		{"the last line, want past the end", text, 4, 31, false, "", false},
		{"the last line, to its end past the end", text, 4, 64, true, "", false},
		{"a line past the end", text, 5, 1, false, "", false},
		{"the line after a last line end", []byte("a\nb\n"), 2, 0, false, "", true},
		{"the line after a last line end, want past it", []byte("a\nb\n"), 2, 1, false, "", false},
		{"a NUL before the line", []byte("a\x00\nb\n"), 1, 1, false, "", false},
		{"a NUL in the bytes copied", []byte("a\nb\x00\n"), 1, 3, false, "", false},
		{"a NUL past the bytes copied", []byte("a\nbc\x00\n"), 1, 2, false, "bc", true},
		{"a NUL past the line's end", []byte("a\nb\n\x00"), 1, 8, true, "b\n", true},
		{"the block's last line", []byte("0\n1\n2\n3\n4\n5\n6\n7\n8\n9\na\nb\nc\nd\ne\nf\ng\n"), 15, 2, false, "f\n", true},
	} {
		p := bytes.Repeat([]byte{'#'}, c.want)
		n, ok := lineAt(p, c.b, c.skip, c.toLineEnd)
		if ok != c.ok || (ok && string(p[:n]) != c.got) {
			t.Errorf("%s: %q, %v; want %q, %v", c.name, p[:n], ok, c.got, c.ok)
		}
	}
}

// lineAt answers as its brute force (line ends found one at a time, a NUL
// looked for in every byte before the line and copied) on random bytes of
// line ends, CRs, NULs and letters, across its chunks' edges.
func TestLineAtRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	alphabet := []byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n\n\n\r\x00")
	for range 20000 {
		b := make([]byte, r.IntN(4*scanChunk))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
			if r.IntN(4) == 0 {
				b[i] = 'x' // fewer NULs and line ends in some runs
			}
		}
		skip, want, toLineEnd := r.IntN(24), r.IntN(120), r.IntN(2) == 0
		p := make([]byte, want)
		n, ok := lineAt(p, b, skip, toLineEnd)
		wantB, wantOK := lineAtBrute(b, skip, want, toLineEnd)
		if ok != wantOK || (ok && !bytes.Equal(p[:n], wantB)) {
			t.Fatalf("%q, line +%d, %d bytes (to its end %v): %q, %v; want %q, %v", b, skip, want, toLineEnd, p[:n], ok, wantB, wantOK)
		}
	}
}

// lineAtBrute is lineAt one line end at a time.
func lineAtBrute(b []byte, skip, want int, toLineEnd bool) ([]byte, bool) {
	start := 0
	for range skip {
		i := bytes.IndexByte(b[start:], '\n')
		if i < 0 {
			return nil, false
		}
		start += i + 1
	}
	end := start + want
	if toLineEnd {
		if i := bytes.IndexByte(b[start:min(end, len(b))], '\n'); i >= 0 {
			end = start + i + 1
		}
	}
	if end > len(b) || bytes.IndexByte(b[:end], 0) >= 0 {
		return nil, false
	}
	return b[start:end], true
}

// randomLines is a file of random lines: short and long, empty, CRLF, the
// last without a line end.
func randomLines(r *rand.Rand, n int) []byte {
	var b []byte
	for i := range n {
		size := r.IntN(120)
		switch r.IntN(20) {
		case 0:
			size = 0
		case 1:
			size = 3000 + r.IntN(6000)
		}
		for range size {
			b = append(b, byte('a'+r.IntN(26)))
		}
		if i == n-1 {
			break
		}
		if r.IntN(5) == 0 {
			b = append(b, '\r')
		}
		b = append(b, '\n')
	}
	return b
}

// LineMapped copies what F.ReadAt reads, at random line starts, lines
// after them and lengths, and answers wherever the line and its bytes lie
// within the mapping; before and after the file grew past its mapping
// (a line past it: false, for the caller's read).
func TestLineMappedEqualsReadAt(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	data := randomLines(r, 600)
	var starts []int64
	for i := range data {
		if i == 0 || data[i-1] == '\n' {
			starts = append(starts, int64(i))
		}
	}
	h, p, _ := acquireFile(t, data)
	if _, ok := h.LineMapped(make([]byte, 1), 0, 0, false); ok {
		t.Fatal("a line read before the handle's mapping")
	}
	if _, err := h.ReadMapped(make([]byte, 1), 0); err != nil {
		t.Fatal(err)
	}
	if h.m.Load() != nil {
		t.Fatal("mapped at the first ReadMapped: LineMapped counted a read")
	}
	mapNow(t, h)
	compare := func(mapped int64) {
		t.Helper()
		answered := 0
		for range 3000 {
			off := starts[r.IntN(len(starts))]
			skip, want, toLineEnd := r.IntN(16), r.IntN(300), r.IntN(2) == 0
			if r.IntN(10) == 0 {
				want = r.IntN(20000)
			}
			if r.IntN(50) == 0 {
				off = int64(r.IntN(len(data) + 64)) // not a line start, or past the end
			}
			want0, end, ok0 := lineByReadAt(t, h, off, skip, want, toLineEnd)
			got := bytes.Repeat([]byte{'#'}, want)
			n, ok := h.LineMapped(got, off, skip, toLineEnd)
			if ok && (!ok0 || !bytes.Equal(got[:n], want0)) {
				t.Fatalf("at %d, line +%d, %d bytes (to its end %v): mapped %q; read %q, %v", off, skip, want, toLineEnd, got[:n], want0, ok0)
			}
			if !ok && ok0 && end <= mapped { // the file holds no NUL
				t.Fatalf("at %d, line +%d, %d bytes (to its end %v): within the mapping, not answered", off, skip, want, toLineEnd)
			}
			if ok {
				answered++
			}
		}
		if answered < 2000 {
			t.Fatalf("%d of 3000 answered from the mapping", answered)
		}
	}
	compare(int64(len(data)))
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(append([]byte("\n"), randomLines(r, 200)...)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	compare(int64(len(data)))
}

// A NUL among the bytes scanned or copied: false, the caller reads the
// file (a NUL is rare in an indexed file, not absent).
func TestLineMappedNUL(t *testing.T) {
	h, _, _ := acquireFile(t, []byte("one\ntw\x00o\nthree\n"))
	mapNow(t, h)
	p := make([]byte, 5)
	if n, ok := h.LineMapped(p, 0, 2, false); ok {
		t.Errorf("a line after a NUL: %q from the mapping", p[:n])
	}
	if n, ok := h.LineMapped(p[:3], 0, 1, false); ok {
		t.Errorf("a NUL copied: %q from the mapping", p[:n])
	}
	if n, ok := h.LineMapped(p[:2], 0, 1, false); !ok || string(p[:n]) != "tw" {
		t.Errorf("the bytes before a NUL: %q, %v; want \"tw\", true", p[:n], ok)
	}
}

// A file cut under its mapping: a line past its new end, or one within it
// whose scan or copy reaches past it (the zeros of its last page, or a
// fault on the pages after), is not answered from the mapping, and the
// process goes on; one before the end still is.
func TestLineMappedShrunkFile(t *testing.T) {
	pg := os.Getpagesize()
	line := []byte("0123456789abcde\n")
	data := bytes.Repeat(line, 4*pg/16)
	h, p, _ := acquireFile(t, data)
	mapNow(t, h)
	if err := os.Truncate(p, 100); err != nil { // six lines and 4 bytes
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	// The scan itself meets the fault, which LineMapped catches.
	if !faults(func() { lineAt(buf[:1], (*h.m.Load())[pg-16:], 3, false) }) {
		t.Error("no fault scanning from a cut file's end's page to the next page")
	}
	for _, c := range []struct {
		name      string
		off       int64
		skip      int
		want      int
		toLineEnd bool
	}{
		{"a line on a page past the end", int64(2 * pg), 0, 16, false},
		{"the scan through the end's zeros to a fault", int64(pg - 16), 3, 1, false},
		{"the scan from the end's page", 96, 1, 1, false},
		{"the line across the end", 96, 0, 16, false},
		{"the line across the end, to its end", 96, 0, 16, true},
		{"the line past the end", 0, 7, 1, false},
	} {
		if n, ok := h.LineMapped(buf[:c.want], c.off, c.skip, c.toLineEnd); ok {
			t.Errorf("%s: %q from the mapping of a file cut to 100 bytes", c.name, buf[:n])
		}
	}
	if n, ok := h.LineMapped(buf, 0, 5, true); !ok || !bytes.Equal(buf[:n], line) {
		t.Errorf("the line before a cut file's end: %q, %v; want %q, true", buf[:n], ok, line)
	}
}

// faults reports whether read panicked on a memory fault.
func faults(read func()) (faulted bool) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		_, faulted = recover().(interface{ Addr() uintptr })
	}()
	read()
	return false
}
