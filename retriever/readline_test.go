package retriever

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"runls/retriever/internal/corpus"
	"runls/retriever/internal/runfs"
)

// blockReadLine is readLine as it was before it read through
// Handle.LineMapped, kept as its brute force: the line's whole block read
// (through the mapping, ReadMapped), then the line found in the copy; want
// bytes from its start, fewer at the file's end.
func blockReadLine(rb *readBack, fs *corpus.File, n uint32, want int, buf *[]byte) ([]byte, error) {
	k := int(n / lineIndexEvery)
	index := fs.Lines()
	if k >= len(index) {
		return nil, io.ErrUnexpectedEOF
	}
	h, err := rb.handles.Acquire(rb.fsys, fs.Rel, fs.Dev, fs.Ino)
	if err != nil {
		return nil, err
	}
	defer rb.handles.Release(h)
	off := index[k]
	skip := int(n % lineIndexEvery)
	b := (*buf)[:0]
	defer func() { *buf = b[:0] }()
	size := 4 << 10
	if k+1 < len(index) {
		size = int(min(max(index[k+1]-off, 1), 1<<20))
	}
	start := 0
	for {
		b = slices.Grow(b, size)
		m, err := h.ReadMapped(b[len(b):len(b)+size], off+int64(len(b)))
		b = b[:len(b)+m]
		for skip > 0 {
			i := bytes.IndexByte(b[start:], '\n')
			if i < 0 {
				break
			}
			start += i + 1
			skip--
		}
		if skip == 0 && len(b)-start >= want {
			return b[start : start+want], nil
		}
		if err != nil || m == 0 {
			if skip == 0 {
				return b[start:], nil
			}
			return nil, io.ErrUnexpectedEOF
		}
		if size < 1<<20 {
			size *= 2
		}
	}
}

// readLine reads what its block read (blockReadLine) and the plain path
// (rb.plainReads: pread) read, for many random lines and lengths of a
// generated file (short and long lines, empty ones, CRLF ones, the last
// without a line end, lines past the end), to the line's end or not: as
// indexed, grown past its mapping, and cut short under it.
func TestReadLineEqualsBlockRead(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const lines = 3000
	data, index := generatedLines(r, lines, 150)
	rb, fs, p := readBackOf(t, data, index)

	var bufOld, bufNew, bufPlain []byte
	compare := func(what string) {
		t.Helper()
		for range 4000 {
			n := uint32(r.IntN(lines + 40))
			want := r.IntN(200)
			switch r.IntN(10) {
			case 0:
				want = r.IntN(12000)
			case 1:
				want = 64 << 10 // readWholeLine's first
			}
			toLineEnd := r.IntN(2) == 0
			old, oerr := blockReadLine(rb, fs, n, want, &bufOld)
			old = toEnd(old, toLineEnd)
			rb.plainReads = false
			got, gerr := rb.readLine(fs, n, want, toLineEnd, &bufNew)
			rb.plainReads = true
			plain, perr := rb.readLine(fs, n, want, toLineEnd, &bufPlain)
			rb.plainReads = false
			for _, c := range []struct {
				name string
				b    []byte
				err  error
			}{{"read through the mapping", got, gerr}, {"read with pread", plain, perr}} {
				if !bytes.Equal(c.b, old) || !errors.Is(c.err, oerr) || (c.err == nil) != (oerr == nil) {
					t.Fatalf("%s, line %d, %d bytes (to its end %v): %s %s, %v; its block's read %s, %v",
						what, n, want, toLineEnd, c.name, short(c.b), c.err, short(old), oerr)
				}
			}
		}
	}
	compare("as indexed")
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(bytes.Repeat([]byte("\ngrown line\r"), 5000)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	compare("grown past its mapping")
	if err := os.Truncate(p, int64(len(data)/2)); err != nil {
		t.Fatal(err)
	}
	compare("cut short under its mapping")
}

// generatedLines is a file of n random lines of up to size bytes (a few
// empty, a few long, some CRLF, the last without a line end) and its
// sparse line index.
func generatedLines(r *rand.Rand, n, size int) ([]byte, []int64) {
	var data []byte
	var index []int64
	for i := range n {
		if i%lineIndexEvery == 0 {
			index = append(index, int64(len(data)))
		}
		l := r.IntN(size)
		switch r.IntN(25) {
		case 0:
			l = 0
		case 1:
			l = 2000 + r.IntN(9000)
		}
		for range l {
			data = append(data, byte('a'+r.IntN(26)))
		}
		if i == n-1 {
			break
		}
		if r.IntN(6) == 0 {
			data = append(data, '\r')
		}
		data = append(data, '\n')
	}
	return data, index
}

// readBackOf writes data to a file of a fresh folder and returns a
// readBack of the folder, the file as indexed with line index index, and
// its path.
func readBackOf(tb testing.TB, data []byte, index []int64) (*readBack, *corpus.File, string) {
	tb.Helper()
	dir := tb.TempDir()
	p := filepath.Join(dir, "a.log")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { root.Close() })
	info, err := os.Stat(p)
	if err != nil {
		tb.Fatal(err)
	}
	dev, ino := runfs.FileID(info)
	fs := &corpus.File{Rel: "a.log", Dev: dev, Ino: ino, LineIndex: index, ReadPos: int64(len(data))}
	hs := runfs.NewHandles(4)
	tb.Cleanup(hs.CloseAll)
	return &readBack{fsys: root, handles: &hs}, fs, p
}

// A JSON line's prose piece reads its line whole (readWholeLine): through
// its block's read, 64 KiB from the line's start (its block, then what
// follows it); to its line end through LineMapped. Lines of 300 bytes.
func BenchmarkReadWholeLine(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	const lines = 20000
	data, index := generatedLines(r, lines, 600)
	rb, fs, _ := readBackOf(b, data, index)
	var buf []byte
	for _, c := range []struct {
		name string
		read func(n uint32) ([]byte, error)
	}{
		{"block", func(n uint32) ([]byte, error) { return blockReadLine(rb, fs, n, 64<<10, &buf) }},
		{"line", func(n uint32) ([]byte, error) { return rb.readLine(fs, n, 64<<10, true, &buf) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			n := uint32(0)
			for b.Loop() {
				n = (n + 7919) % (lines - 1000)
				if _, err := c.read(n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// short is b for a message: its length and its ends.
func short(b []byte) string {
	if len(b) <= 40 {
		return fmt.Sprintf("%q", b)
	}
	return fmt.Sprintf("%d bytes %q...%q", len(b), b[:20], b[len(b)-20:])
}
