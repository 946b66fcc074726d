package store

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestFaultOnTruncatedMapping: a blob cut under a reader's mapping (by
// someone outside the store) makes the read an error, not a crash; the
// snapshot is marked corrupt, and the writer drops that commit.
func TestFaultOnTruncatedMapping(t *testing.T) {
	if !canMap {
		t.Skip("no mmap here")
	}
	run, root := testRun(t)
	e := openEntry(t, root, run, Options{})
	data := genContent(1, 0, 1<<20)
	ref := writeBlob(t, e, data)
	s, err := e.Commit([]BlobRef{ref}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := s.Blob(ref.Name)
	if !b.Mapped() {
		t.Fatal("not mapped")
	}
	if err := os.Truncate(filepath.Join(e.Dir(), ref.Name), 4096); err != nil {
		t.Fatal(err)
	}
	var sum byte
	err = b.Access(func(c []byte) error {
		for _, x := range c[len(c)/2:] { // pages past the new end
			sum += x
		}
		return nil
	})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read past the cut: %v", err)
	}
	if !errors.Is(s.Corrupt(), ErrCorrupt) {
		t.Errorf("snapshot not marked: %v", s.Corrupt())
	}
	if err := b.Verify(); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Verify: %v", err)
	}
	if slices.Contains(dirNames(t, e.Dir()), manifestName) {
		t.Error("writer kept the commit")
	}
	if got, err := e.Snapshot(); got != nil || err != nil {
		t.Errorf("snapshot after the fault: %v %v", got, err)
	}
	// The pages before the cut still read.
	if err := b.Access(func(c []byte) error { sum += c[100]; return nil }); err != nil {
		t.Errorf("read before the cut: %v", err)
	}
}

// TestAccessPassesOtherPanics: the guard catches faults on the snapshot's
// mappings only; any other panic goes on.
func TestAccessPassesOtherPanics(t *testing.T) {
	run, root := testRun(t)
	e := openEntry(t, root, run, Options{})
	ref := writeBlob(t, e, []byte("content"))
	s, err := e.Commit([]BlobRef{ref}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for name, fn := range map[string]func([]byte) error{
		"index": func(c []byte) error { _ = c[len(c)+int(c[0]&0)]; return nil },
		"nil":   func([]byte) error { var p *int; _ = *p; return nil },
		"value": func([]byte) error { panic("mine") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: panic swallowed", name)
				}
			}()
			s.Blob(ref.Name).Access(fn)
		}()
	}
	if s.Corrupt() != nil {
		t.Errorf("marked corrupt: %v", s.Corrupt())
	}
}

// Snapshot.Fault takes a fault caught outside Access: an address in one of
// its mappings (its last page too) is its corruption, and marks it; any
// other address, or any once it is closed, is not its.
func TestSnapshotFault(t *testing.T) {
	if !canMap {
		t.Skip("no mmap here")
	}
	run, root := testRun(t)
	e := openEntry(t, root, run, Options{})
	ref := writeBlob(t, e, genContent(1, 0, 10000))
	s, err := e.Commit([]BlobRef{ref}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := s.Blob(ref.Name)
	start := uintptrOf(b.file)
	if err := s.Fault(start - 1); err != nil {
		t.Errorf("an address before the mapping: %v", err)
	}
	if err := s.Fault(start + uintptr(roundPage(len(b.file)))); err != nil {
		t.Errorf("an address past the mapping's pages: %v", err)
	}
	if s.Corrupt() != nil {
		t.Fatal("marked by a fault not its own")
	}
	if err := b.Fault(start + uintptr(len(b.file))); !errors.Is(err, ErrCorrupt) {
		t.Errorf("an address in the mapping's last page: %v", err)
	}
	if !errors.Is(s.Corrupt(), ErrCorrupt) {
		t.Error("not marked corrupt")
	}
	s.Close()
	if err := s.Fault(start); err != nil {
		t.Errorf("closed, it maps nothing: %v", err)
	}
}
