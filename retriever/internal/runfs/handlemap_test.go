package runfs

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unsafe"
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
	if mapsFiles && h.m.Load() == nil {
		t.Fatal("nothing was mapped: the reads above were preads, not the mapping's")
	}
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
// before the end) and the process goes on; the page its end is in, whose
// mapping reads zeros past the end, is read as a pread reads it too.
func TestReadMappedShrunkFile(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 4*4096/16)
	h, p, _ := acquireFile(t, data)
	for range 2 { // mapped at the second read
		if _, err := h.ReadMapped(make([]byte, 1), 0); err != nil {
			t.Fatal(err)
		}
	}
	if h.m.Load() == nil {
		if mapsFiles {
			t.Fatal("nothing was mapped")
		}
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
	n, err = h.ReadMapped(buf, 90) // within the end's page: its zeros are not the file's
	if n != 10 || !errors.Is(err, io.EOF) || string(buf[:n]) != string(data[90:100]) {
		t.Errorf("at 90 of a file cut to 100: %d bytes %q, %v; want pread's 10 bytes, io.EOF", n, buf[:n], err)
	}
}

// copyGuarded catches a fault of the mapping it copies from only: another
// (a stray pointer's: the flag makes every fault a panic) is no cut file,
// and panics on, as does any other panic.
func TestCaughtFaultOnlyWithin(t *testing.T) {
	src := make([]byte, 8)
	start := uintptr(unsafe.Pointer(&src[0]))
	for _, c := range []struct {
		name string
		r    any
		want bool
	}{
		{"its first byte", fakeFault(start), true},
		{"its last byte", fakeFault(start + 7), true},
		{"just past it", fakeFault(start + 8), false},
		{"just before it", fakeFault(start - 1), false},
		{"a nil pointer's", fakeFault(0), false},
		{"no fault", "a bug", false},
	} {
		if got := caughtFault(c.r, src); got != c.want {
			t.Errorf("%s: caught %v, want %v", c.name, got, c.want)
		}
	}
	if caughtFault(fakeFault(start), nil) {
		t.Error("a fault caught for an empty source")
	}
}

// fakeFault is a panic value as a memory fault's: runtime.Error with Addr.
type fakeFault uintptr

func (f fakeFault) Error() string { return "fault" }
func (f fakeFault) RuntimeError() {}
func (f fakeFault) Addr() uintptr { return uintptr(f) }

// A handle maps its file as it is at the mapping (its second read), not as
// it was at its open: a live log grows while its handle is kept.
func TestMappingTakesSizeAtSecondRead(t *testing.T) {
	if !mapsFiles {
		t.Skip("no mapping on this system")
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), 4096/16)
	h, p, _ := acquireFile(t, data)
	if _, err := h.ReadMapped(make([]byte, 1), 0); err != nil { // the first read: a pread
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := h.ReadMapped(make([]byte, 1), 0); err != nil { // the second: mapped
		t.Fatal(err)
	}
	if m := h.m.Load(); m == nil || len(*m) != 2*len(data) {
		t.Fatalf("the mapping of a file of %d bytes grown to %d: %d bytes", len(data), 2*len(data), mappedLen(m))
	}
}

func mappedLen(m *[]byte) int {
	if m == nil {
		return 0
	}
	return len(*m)
}
