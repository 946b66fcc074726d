package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// damage is one way a cache file goes bad.
type damage struct {
	name string
	do   func(path string, size int64) error
	// frameOnly: seen by VerifyFrame too (else only by VerifyFull).
	frameOnly bool
}

func damages() []damage {
	flip := func(at func(size int64) int64) func(string, int64) error {
		return func(path string, size int64) error {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			b[at(size)] ^= 0x01
			return os.WriteFile(path, b, 0o600)
		}
	}
	cut := func(to func(size int64) int64) func(string, int64) error {
		return func(path string, size int64) error { return os.Truncate(path, to(size)) }
	}
	return []damage{
		{"emptied", cut(func(int64) int64 { return 0 }), true},
		{"cut in half", cut(func(s int64) int64 { return s / 2 }), true},
		{"last byte cut", cut(func(s int64) int64 { return s - 1 }), true},
		{"a byte added", func(path string, size int64) error {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.Write([]byte{0})
			return err
		}, true},
		{"first byte flipped", flip(func(int64) int64 { return 0 }), true},
		{"length flipped", flip(func(int64) int64 { return 16 }), true},
		{"middle byte flipped", flip(func(s int64) int64 { return s / 2 }), false},
		{"last byte flipped", flip(func(s int64) int64 { return s - 1 }), true},
		{"removed", func(path string, _ int64) error { return os.Remove(path) }, true},
	}
}

// TestCorruption: each file of a commit in turn damaged each way; the
// writer's open drops the commit and says so once, never panics, leaves
// the folder clean, and the entry takes a new commit; a reader's open drops
// it too and removes nothing.
func TestCorruption(t *testing.T) {
	for _, verify := range []VerifyMode{VerifyFull, VerifyFrame} {
		for _, read := range []ReadMode{ReadMap, ReadHeap} {
			for _, target := range []int{-1, 0, 1, 2} { // -1: the manifest
				for _, d := range damages() {
					name := fmt.Sprintf("verify%d/read%d/file%d/%s", verify, read, target, d.name)
					t.Run(name, func(t *testing.T) {
						run, root := testRun(t)
						e := openEntry(t, root, run, Options{})
						s := commitGen(t, e, 1, 3)
						file := manifestName
						if target >= 0 {
							file = s.Blobs()[target].Ref().Name
						}
						s.Close()
						e.Close()
						path := filepath.Join(e.Dir(), file)
						fi, err := os.Stat(path)
						if err != nil {
							t.Fatal(err)
						}
						if err := d.do(path, fi.Size()); err != nil {
							t.Fatal(err)
						}
						seen := verify == VerifyFull || d.frameOnly || target == -1

						e = openEntry(t, root, run, Options{Verify: verify, Read: read})
						rep := e.Report()
						if !seen {
							// A content byte flipped, opened with VerifyFrame:
							// not seen at open; Blob.Verify sees it.
							s, err := e.Snapshot()
							if rep != nil || err != nil || s == nil {
								t.Fatalf("report %v, err %v", rep, err)
							}
							defer s.Close()
							if err := s.Blobs()[target].Verify(); !errors.Is(err, ErrCorrupt) {
								t.Fatalf("Verify: %v", err)
							}
							// Checked at its first use: corrupt, and the
							// writer drops the commit.
							if err := s.Blobs()[target].Check(); !errors.Is(err, ErrCorrupt) || !errors.Is(s.Corrupt(), ErrCorrupt) {
								t.Fatalf("Check: %v, snapshot %v", err, s.Corrupt())
							}
							if next, err := e.Snapshot(); next != nil || err != nil {
								t.Fatalf("the commit was kept: %v", err)
							}
							return
						}
						switch {
						case target == -1 && d.name == "removed":
							// No commit point: a first write that never
							// committed. Its blobs are removed, not a drop.
							if rep == nil || rep.Dropped() || len(rep.Items) != 3 {
								t.Fatalf("report: %v", rep)
							}
						case rep == nil || !rep.Dropped() || len(rep.Items) == 0 || rep.Items[0].File != manifestName || rep.Items[0].Action != "dropped":
							t.Fatalf("report: %v", rep)
						}
						if s, err := e.Snapshot(); s != nil || err != nil {
							t.Fatalf("a dropped commit gives a snapshot: %v", err)
						}
						if names := dirNames(t, e.Dir()); !slices.Equal(names, []string{lockName}) {
							t.Errorf("folder after the drop: %v", names)
						}
						commitGen(t, e, 2, 2).Close()
					})
				}
			}
		}
	}
}

// TestCorruptionReader: a reader meeting a damaged commit drops it (uses
// no snapshot) and removes nothing.
func TestCorruptionReader(t *testing.T) {
	run, root := testRun(t)
	w := openEntry(t, root, run, Options{})
	s := commitGen(t, w, 1, 2)
	blob := filepath.Join(w.Dir(), s.Blobs()[1].Ref().Name)
	s.Close()
	os.Truncate(blob, 10)
	r := openEntry(t, root, run, Options{})
	if r.Writable() || !r.Report().Dropped() {
		t.Fatalf("writable %v, report %v", r.Writable(), r.Report())
	}
	if s, err := r.Snapshot(); s != nil || err != nil {
		t.Fatalf("%v %v", s, err)
	}
	if _, err := os.Stat(blob); err != nil {
		t.Errorf("reader removed a file: %v", err)
	}
}

// TestManifestOfAnotherEntry: a manifest copied from another run or
// configuration's entry is dropped.
func TestManifestOfAnotherEntry(t *testing.T) {
	run, root := testRun(t)
	other := filepath.Join(filepath.Dir(run), "other")
	os.Mkdir(other, 0o755)
	a := openEntry(t, root, run, Options{})
	commitGen(t, a, 1, 1).Close()
	b := openEntry(t, root, other, Options{})
	b.Close()
	a.Close()
	for _, name := range dirNames(t, a.Dir()) {
		if name != lockName {
			data, _ := os.ReadFile(filepath.Join(a.Dir(), name))
			os.WriteFile(filepath.Join(b.Dir(), name), data, 0o600)
		}
	}
	b = openEntry(t, root, other, Options{})
	if !b.Report().Dropped() {
		t.Fatalf("report: %v", b.Report())
	}
}
