package store

// This file checks a snapshot opened with VerifyFrame: each blob's content
// checked at its first use (Blob.Check, or a part of it: CheckRange) or in
// the background (CheckAll),
// a blob damaged after the open and before that use never taken for good.

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// flipAt flips one byte of a file in place (the same file, not a new one:
// a mapping of it sees the change).
func flipAt(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x01
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// TestCheckAfterOpen: a content byte flipped after a VerifyFrame open and
// before the blob's first use. Mapped, Check finds it (the bytes an answer
// would read are the damaged ones), marks the snapshot corrupt and the
// writer drops the commit; the other blobs check clean, and asking again
// gives the same answer. Read onto the heap, the copy taken at open is
// whole, and Check says so.
func TestCheckAfterOpen(t *testing.T) {
	for _, read := range []ReadMode{ReadMap, ReadHeap} {
		t.Run(map[ReadMode]string{ReadMap: "map", ReadHeap: "heap"}[read], func(t *testing.T) {
			run, root := testRun(t)
			e := openEntry(t, root, run, Options{})
			commitGen(t, e, 1, 3).Close()
			e.Close()

			e = openEntry(t, root, run, Options{Verify: VerifyFrame, Read: read})
			s, err := e.Snapshot()
			if err != nil || s == nil {
				t.Fatalf("snapshot %v, %v", s, err)
			}
			defer s.Close()
			bad := s.Blobs()[1]
			flipAt(t, filepath.Join(e.Dir(), bad.Ref().Name), blobHeaderSize+bad.Ref().Length/2)
			for i, b := range s.Blobs() {
				if i != 1 {
					if err := b.Check(); err != nil {
						t.Fatalf("blob %d: %v", i, err)
					}
				}
			}
			if read == ReadHeap {
				if err := bad.Check(); err != nil || s.Corrupt() != nil {
					t.Fatalf("the heap copy: %v, corrupt %v", err, s.Corrupt())
				}
				checkGen(t, s)
				return
			}
			err = bad.Check()
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Check of the damaged blob: %v", err)
			}
			if again := bad.Check(); again != err {
				t.Fatalf("asked again: %v, first %v", again, err)
			}
			if !errors.Is(s.Corrupt(), ErrCorrupt) {
				t.Fatalf("snapshot not corrupt: %v", s.Corrupt())
			}
			if err := s.CheckAll(context.Background()); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("CheckAll: %v", err)
			}
			if next, err := e.Snapshot(); next != nil || err != nil {
				t.Fatalf("the writer kept the commit: %v %v", next, err)
			}
		})
	}
}

// TestCheckAllAndClose: CheckAll in the background, Checks from searches and
// Close at once: every check is done or refused before the blobs are
// unmapped (run with -race; a read of an unmapped page would crash), and a
// Check after Close is an error that is not a corruption.
func TestCheckAllAndClose(t *testing.T) {
	run, root := testRun(t)
	e := openEntry(t, root, run, Options{})
	commitGen(t, e, 3, 8).Close()
	e.Close()
	for range 20 {
		e := openEntry(t, root, run, Options{Verify: VerifyFrame})
		s, err := e.Snapshot()
		if err != nil || s == nil {
			t.Fatalf("snapshot %v, %v", s, err)
		}
		var wg sync.WaitGroup
		wg.Add(3)
		go func() {
			defer wg.Done()
			if err := s.CheckAll(context.Background()); err != nil && !errors.Is(err, errClosed) {
				t.Errorf("CheckAll: %v", err)
			}
		}()
		go func() {
			defer wg.Done()
			for i := len(s.Blobs()) - 1; i >= 0; i-- {
				b := s.Blobs()[i]
				if err := b.CheckRange(b.Ref().Length/2, 1); err != nil && !errors.Is(err, errClosed) {
					t.Errorf("CheckRange: %v", err)
				}
				if err := b.Check(); err != nil && !errors.Is(err, errClosed) {
					t.Errorf("Check: %v", err)
				}
			}
		}()
		go func() {
			defer wg.Done()
			s.Close()
		}()
		wg.Wait()
		// checked before the Close (remembered), or refused
		if err := s.Blobs()[0].Check(); errors.Is(err, ErrCorrupt) || err != nil && !errors.Is(err, errClosed) {
			t.Fatalf("Check after Close: %v", err)
		}
		if s.Corrupt() != nil {
			t.Fatalf("corrupt: %v", s.Corrupt())
		}
		e.Close()
	}
}

// TestCheckRemembered: a blob checked once in this process (written by it,
// checked by an open with VerifyFull, or by Check) is not read again by a
// later snapshot; one it never checked is.
func TestCheckRemembered(t *testing.T) {
	run, root := testRun(t)
	e := openEntry(t, root, run, Options{Verify: VerifyFrame})
	s := commitGen(t, e, 1, 2)
	for _, b := range s.Blobs() {
		if !b.checked {
			t.Fatalf("a blob this process wrote is not taken as checked")
		}
	}
	s.Close()
	e.Close()

	e = openEntry(t, root, run, Options{Verify: VerifyFrame})
	s, err := e.Snapshot()
	if err != nil || s == nil {
		t.Fatalf("snapshot %v, %v", s, err)
	}
	if s.Blobs()[0].checked || s.Blobs()[1].checked {
		t.Fatalf("a new process's VerifyFrame open took blobs as checked")
	}
	if err := s.Blobs()[0].Check(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	e.mu.Lock()
	e.cached = nil
	next, err := e.openSnapshot(e.m)
	e.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if !next.Blobs()[0].checked || next.Blobs()[1].checked {
		t.Fatalf("checked: %v %v, want true false", next.Blobs()[0].checked, next.Blobs()[1].checked)
	}
}

// TestCheckRange: a blob of several chunks opened with VerifyFrame, a byte
// of one chunk flipped after the open and before its first use. Ranges of
// the other chunks check clean, once (a chunk found good is not read again);
// the first range that holds the damaged byte finds it, marks the snapshot
// corrupt and the writer drops the commit; from then on no range of the blob
// is said good, whole Check included. Every chunk checked by ranges is the
// whole blob checked; a manifest without chunk sums checks the whole blob.
func TestCheckRange(t *testing.T) {
	run, root := testRun(t)
	e := openEntry(t, root, run, Options{})
	data := genContent(9, 0, 5*ChunkSize+ChunkSize/2)
	ref := writeBlob(t, e, data)
	if len(ref.Chunks) != 4*6 {
		t.Fatalf("%d bytes of chunk sums for 5.5 chunks", len(ref.Chunks))
	}
	if _, err := e.Commit([]BlobRef{ref}, nil); err != nil {
		t.Fatal(err)
	}
	e.Close()

	t.Run("every chunk", func(t *testing.T) {
		e := openEntry(t, root, run, Options{Verify: VerifyFrame})
		s, err := e.Snapshot()
		if err != nil || s == nil {
			t.Fatalf("snapshot %v, %v", s, err)
		}
		defer s.Close()
		b := s.Blobs()[0]
		for _, r := range [][2]int64{{0, 1}, {ChunkSize - 1, 2}, {3*ChunkSize + 5, 0}, {2 * ChunkSize, ChunkSize}, {4*ChunkSize + 7, ChunkSize + 100}} {
			if err := b.CheckRange(r[0], r[1]); err != nil {
				t.Fatalf("range %v: %v", r, err)
			}
		}
		if b.whole.Load() || b.checked {
			t.Fatal("the blob taken as checked whole with chunk 3 unchecked")
		}
		if !b.chunksGood(0, 2) || b.chunksGood(3, 3) || !b.chunksGood(4, 5) {
			t.Fatal("chunks found good: want 0-2 and 4-5")
		}
		if !b.Checked(ChunkSize+3, ChunkSize) || b.Checked(3*ChunkSize-1, 2) || !b.Checked(4*ChunkSize, b.Ref().Length-4*ChunkSize) || !b.Checked(5, 0) || b.Checked(-1, 1) {
			t.Fatal("Checked does not say what CheckRange checked")
		}
		if err := b.CheckRange(3*ChunkSize, 10); err != nil {
			t.Fatal(err)
		}
		if !b.whole.Load() || !b.checked || b.checkErr != nil {
			t.Fatal("every chunk checked, the blob not taken as checked whole")
		}
		for _, r := range [][2]int64{{-1, 2}, {0, -1}, {0, b.Ref().Length + 1}, {b.Ref().Length, 1}} {
			if err := b.CheckRange(r[0], r[1]); err == nil || errors.Is(err, ErrCorrupt) {
				t.Fatalf("range %v out of the blob: %v", r, err)
			}
		}
	})

	t.Run("flipped after the open", func(t *testing.T) {
		e := openEntry(t, root, run, Options{Verify: VerifyFrame})
		s, err := e.Snapshot()
		if err != nil || s == nil {
			t.Fatalf("snapshot %v, %v", s, err)
		}
		defer s.Close()
		b := s.Blobs()[0]
		if err := b.CheckRange(0, ChunkSize); err != nil {
			t.Fatal(err)
		}
		flipAt(t, filepath.Join(e.Dir(), b.Ref().Name), blobHeaderSize+3*ChunkSize+100)
		flipAt(t, filepath.Join(e.Dir(), b.Ref().Name), blobHeaderSize+10) // chunk 0, found good before
		if err := b.CheckRange(ChunkSize, 2*ChunkSize); err != nil {
			t.Fatalf("chunks 1-2, clean: %v", err)
		}
		err = b.CheckRange(2*ChunkSize+10, ChunkSize)
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("the range holding the flipped byte: %v", err)
		}
		if !errors.Is(s.Corrupt(), ErrCorrupt) {
			t.Fatalf("snapshot not corrupt: %v", s.Corrupt())
		}
		for _, r := range [][2]int64{{0, 1}, {ChunkSize, 1}, {5 * ChunkSize, 1}} {
			if again := b.CheckRange(r[0], r[1]); again != err {
				t.Fatalf("range %v after the failure: %v, want %v", r, again, err)
			}
		}
		if again := b.Check(); again != err {
			t.Fatalf("Check after the failure: %v, want %v", again, err)
		}
		if next, err := e.Snapshot(); next != nil || err != nil {
			t.Fatalf("the writer kept the commit: %v %v", next, err)
		}
	})

	t.Run("no chunk sums", func(t *testing.T) {
		dir := t.TempDir()
		e := openEntry(t, root, filepath.Join(dir), Options{})
		ref := writeBlob(t, e, data)
		ref.Chunks = ""
		m, err := DecodeManifest(EncodeManifest(&Manifest{RunPath: "r", Blobs: []BlobRef{ref}}))
		if err != nil || m.Blobs[0] != ref {
			t.Fatalf("a manifest without chunk sums: %v, %+v", err, m)
		}
		b, err := openBlob(e.dir, ref, ReadMap, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		flipAt(t, filepath.Join(e.Dir(), ref.Name), blobHeaderSize+4*ChunkSize)
		if err := b.CheckRange(0, 1); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("a range of a blob without chunk sums checks it whole: %v", err)
		}
	})
}

// TestManifestChunkSums: a manifest whose chunk sums do not fit its blob's
// length is corrupt.
func TestManifestChunkSums(t *testing.T) {
	ref := BlobRef{Name: newBlobName(), Length: 2*ChunkSize + 1, Checksum: 7, Chunks: "123456789012"}
	if _, err := DecodeManifest(EncodeManifest(&Manifest{Blobs: []BlobRef{ref}})); err != nil {
		t.Fatal(err)
	}
	ref.Chunks = "12345678"
	if _, err := DecodeManifest(EncodeManifest(&Manifest{Blobs: []BlobRef{ref}})); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("two chunks' sums for three chunks: %v", err)
	}
}

// TestReadAll: a blob's content copied to the heap from its file, checked
// whatever the open checked: whole, the same bytes; with a byte flipped
// after the open, a corruption (the snapshot marked, the commit dropped);
// with the file gone since the open, copied from the mapping; read onto the
// heap at open, a copy of that.
func TestReadAll(t *testing.T) {
	for _, c := range []struct {
		name string
		read ReadMode
		harm func(t *testing.T, path string)
		bad  bool
	}{
		{"map", ReadMap, func(*testing.T, string) {}, false},
		{"map-flipped", ReadMap, func(t *testing.T, p string) { flipAt(t, p, blobHeaderSize+ChunkSize+3) }, true},
		{"map-gone", ReadMap, func(t *testing.T, p string) { os.Remove(p) }, false},
		{"heap-flipped", ReadHeap, func(t *testing.T, p string) { flipAt(t, p, blobHeaderSize+3) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			run, root := testRun(t)
			e := openEntry(t, root, run, Options{})
			data := genContent(4, 1, 2*ChunkSize+77)
			if _, err := e.Commit([]BlobRef{writeBlob(t, e, data)}, nil); err != nil {
				t.Fatal(err)
			}
			e.Close()
			e = openEntry(t, root, run, Options{Verify: VerifyFrame, Read: c.read})
			s, err := e.Snapshot()
			if err != nil || s == nil {
				t.Fatalf("snapshot %v, %v", s, err)
			}
			defer s.Close()
			b := s.Blobs()[0]
			c.harm(t, filepath.Join(e.Dir(), b.Ref().Name))
			got, err := b.ReadAll()
			if c.bad {
				if !errors.Is(err, ErrCorrupt) || !errors.Is(s.Corrupt(), ErrCorrupt) || b.Check() == nil {
					t.Fatalf("ReadAll of a damaged blob: %v, corrupt %v", err, s.Corrupt())
				}
				if next, err := e.Snapshot(); next != nil || err != nil {
					t.Fatalf("the writer kept the commit: %v %v", next, err)
				}
				return
			}
			if err != nil || !bytes.Equal(got, data) || s.Corrupt() != nil {
				t.Fatalf("ReadAll: %d bytes, equal %v, %v, corrupt %v", len(got), bytes.Equal(got, data), err, s.Corrupt())
			}
		})
	}
}

// DropPages lets a mapped blob's pages go from the process and keeps its
// content: read again, it is the same bytes; a closed snapshot's blob and a
// heap copy have nothing to let go.
func TestDropPages(t *testing.T) {
	for _, read := range []ReadMode{ReadMap, ReadHeap} {
		run, root := testRun(t)
		e := openEntry(t, root, run, Options{})
		data := genContent(5, 2, 3*ChunkSize+11)
		if _, err := e.Commit([]BlobRef{writeBlob(t, e, data)}, nil); err != nil {
			t.Fatal(err)
		}
		e.Close()
		e = openEntry(t, root, run, Options{Verify: VerifyFrame, Read: read})
		s, err := e.Snapshot()
		if err != nil || s == nil {
			t.Fatalf("snapshot %v, %v", s, err)
		}
		b := s.Blobs()[0]
		if err := b.Check(); err != nil {
			t.Fatal(err)
		}
		b.DropPages()
		if !bytes.Equal(b.Bytes(), data) || b.Check() != nil || s.Corrupt() != nil {
			t.Fatalf("read %v: the content changed once its pages were let go", read)
		}
		s.Close()
		b.DropPages()
		e.Close()
	}
}
