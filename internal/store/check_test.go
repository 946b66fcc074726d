package store

// This file checks a snapshot opened with VerifyFrame: each blob's content
// checked at its first use (Blob.Check) or in the background (CheckAll),
// a blob damaged after the open and before that use never taken for good.

import (
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
				if err := s.Blobs()[i].Check(); err != nil && !errors.Is(err, errClosed) {
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
