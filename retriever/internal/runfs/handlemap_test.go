package runfs

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// acquireFile writes data to a file of a fresh folder and returns a handle
// on it, its path, and the handles (closed with the test).
func acquireFile(t *testing.T, data []byte) (*Handle, string, *Handles) {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "a.log")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	dev, ino := FileID(info)
	hs := NewHandles(4)
	h, err := hs.Acquire(root, "a.log", dev, ino)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hs.Release(h); hs.CloseAll() })
	return h, p, &hs
}

// ReadMapped reads what F.ReadAt reads, at random places and lengths of a
// file of several pages (and past its end), before and after the file grew
// past its mapping: the mapping is a shortcut, never another answer.
func TestReadMappedEqualsReadAt(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 3*4096+100)
	for i := range data {
		data[i] = byte('a' + r.IntN(26))
	}
	h, p, _ := acquireFile(t, data)
	compare := func(size int) {
		t.Helper()
		for range 2000 {
			off, n := int64(r.IntN(size+64)), r.IntN(9000)
			if r.IntN(8) == 0 {
				off = int64(size - r.IntN(64)) // about the end
			}
			want, got := make([]byte, n), make([]byte, n)
			wn, werr := h.F.ReadAt(want, off)
			gn, gerr := h.ReadMapped(got, off)
			if gn != wn || !bytes.Equal(got[:gn], want[:wn]) || (gerr == nil) != (werr == nil) {
				t.Fatalf("at %d, %d bytes: mapped %d, %v; read %d, %v", off, n, gn, gerr, wn, werr)
			}
		}
	}
	compare(len(data))
	more := bytes.Repeat([]byte("grown\n"), 2000)
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(more); err != nil {
		t.Fatal(err)
	}
	f.Close()
	compare(len(data) + len(more))
}

// A file cut under its mapping faults on the pages past its new end: a
// read there is a pread's (what is left: nothing, io.EOF; or the bytes
// before the end) and the process goes on; the bytes of the page its end
// is in read as zeros past it, as the caller's check of the text (a
// result's key) then finds.
func TestReadMappedShrunkFile(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 4*4096/16)
	h, p, _ := acquireFile(t, data)
	for range 2 { // mapped at the second read
		if _, err := h.ReadMapped(make([]byte, 1), 0); err != nil {
			t.Fatal(err)
		}
	}
	if h.m.Load() == nil {
		t.Skip("no mapping on this system")
	}
	if err := os.Truncate(p, 100); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	for _, off := range []int64{4096, 2 * 4096, 3*4096 + 10} {
		n, err := h.ReadMapped(buf, off)
		if n != 0 || !errors.Is(err, io.EOF) {
			t.Errorf("at %d of a cut file: %d bytes, %v; want 0, io.EOF", off, n, err)
		}
	}
	n, err := h.ReadMapped(make([]byte, 5000), 50) // to the next page: a pread's 50 bytes
	if n != 50 || !errors.Is(err, io.EOF) {
		t.Errorf("at 50 to past the page of a file cut to 100: %d bytes, %v; want 50, io.EOF", n, err)
	}
	n, err = h.ReadMapped(buf, 90)
	if err != nil || n != len(buf) || string(buf[:10]) != string(data[90:100]) || !bytes.Equal(buf[10:], make([]byte, 54)) {
		t.Errorf("at 90 of a file cut to 100: %d bytes %q, %v", n, buf[:n], err)
	}
}
