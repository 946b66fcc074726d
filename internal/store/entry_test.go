package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

func TestEntryReopen(t *testing.T) {
	run, root := testRun(t)
	e := openEntry(t, root, run, Options{})
	if !e.Writable() || e.Report() != nil {
		t.Fatalf("writable %v, report %v", e.Writable(), e.Report())
	}
	if s, err := e.Snapshot(); s != nil || err != nil {
		t.Fatalf("new entry has a commit: %v %v", s, err)
	}
	s := commitGen(t, e, 1, 3)
	checkGen(t, s)
	s.Close()
	e.Close()

	for _, verify := range []VerifyMode{VerifyFull, VerifyFrame} {
		e = openEntry(t, root, run, Options{Verify: verify})
		if e.Report() != nil {
			t.Fatalf("report: %v", e.Report())
		}
		s, err := e.Snapshot()
		if err != nil || s == nil {
			t.Fatalf("%v %v", s, err)
		}
		if gen := checkGen(t, s); gen != 1 || s.Manifest().RunPath != mustReal(t, run) || string(s.Manifest().Config) != "config" {
			t.Fatalf("gen %d, manifest %+v", gen, s.Manifest())
		}
		s.Close()
		e.Close()
	}
}

// TestEntryKeys: another configuration or another run is another entry;
// two paths to one run (a link) are one.
func TestEntryKeys(t *testing.T) {
	run, root := testRun(t)
	link := filepath.Join(filepath.Dir(run), "link")
	if err := os.Symlink(run, link); err != nil {
		t.Fatal(err)
	}
	a, _ := root.Open(run, []byte("mask=off"), Options{})
	defer a.Close()
	b, _ := root.Open(run, []byte("mask=on"), Options{})
	defer b.Close()
	c, _ := root.Open(link, []byte("mask=off"), Options{})
	defer c.Close()
	if a.Key() == b.Key() || a.Key() != c.Key() || !b.Writable() || c.Writable() {
		t.Errorf("keys %s %s %s, writable %v %v", a.Key(), b.Key(), c.Key(), b.Writable(), c.Writable())
	}
}

// TestSecondOpenReadOnly: while one Entry writes, another open of the same
// entry reads its commits and writes nothing; after the writer closes, it
// can take over.
func TestSecondOpenReadOnly(t *testing.T) {
	run, root := testRun(t)
	w := openEntry(t, root, run, Options{})
	commitGen(t, w, 1, 2).Close()
	r := openEntry(t, root, run, Options{})
	if r.Writable() {
		t.Fatal("second open writes")
	}
	if _, err := r.CreateBlob(); !errors.Is(err, ErrReadOnly) {
		t.Errorf("create blob: %v", err)
	}
	if _, err := r.Commit(nil, nil); !errors.Is(err, ErrReadOnly) {
		t.Errorf("commit: %v", err)
	}
	s1, err := r.Snapshot()
	if err != nil || checkGen(t, s1) != 1 {
		t.Fatal(err)
	}
	// The writer commits twice: the reader's old snapshot still reads
	// (its blobs are removed from the folder, not from its mapping), and a
	// new Snapshot is the latest commit.
	commitGen(t, w, 2, 2).Close()
	commitGen(t, w, 3, 2).Close()
	for _, b := range s1.Blobs() {
		if _, err := os.Stat(filepath.Join(w.Dir(), b.Ref().Name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("blob of generation 1 still in the folder: %v", err)
		}
	}
	checkGen(t, s1)
	s1.Close()
	s3, err := r.Snapshot()
	if err != nil || checkGen(t, s3) != 3 {
		t.Fatal(err)
	}
	s3.Close()
	if ok, _ := r.Upgrade(); ok {
		t.Fatal("upgraded while the writer lives")
	}
	w.Close()
	if ok, err := r.Upgrade(); !ok || err != nil {
		t.Fatalf("upgrade after the writer closed: %v", err)
	}
	commitGen(t, r, 4, 1).Close()
}

// TestCommitKeepsBlobs: a commit may name blobs of the commit before;
// those it drops go, those it keeps stay; a blob the entry does not hold
// is refused.
func TestCommitKeepsBlobs(t *testing.T) {
	run, root := testRun(t)
	e := openEntry(t, root, run, Options{})
	a := writeBlob(t, e, []byte("a"))
	b := writeBlob(t, e, []byte("b"))
	s, err := e.Commit([]BlobRef{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	c := writeBlob(t, e, []byte("c"))
	s, err = e.Commit([]BlobRef{b, c}, []byte("two"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Blob(b.Name).Bytes(); !bytes.Equal(got, []byte("b")) {
		t.Errorf("kept blob reads %q", got)
	}
	s.Close()
	if names := dirNames(t, e.Dir()); !slices.Equal(names, sorted(lockName, manifestName, b.Name, c.Name)) {
		t.Errorf("folder holds %v", names)
	}
	forged := c
	forged.Checksum++
	for _, refs := range [][]BlobRef{{a}, {forged}, {c, c}, {{Name: "b-000000000000000000000000.blob"}}} {
		if _, err := e.Commit(refs, nil); err == nil {
			t.Errorf("commit of %v accepted", refs)
		}
	}
}

// TestOpenCollects: the writer's open removes what the manifest does not
// name (an unfinished write, a blob no commit names, a foreign file or
// folder), says it without dropping the commit, and keeps the commit.
func TestOpenCollects(t *testing.T) {
	run, root := testRun(t)
	e := openEntry(t, root, run, Options{})
	commitGen(t, e, 1, 2).Close()
	unnamed := writeBlob(t, e, []byte("never named"))
	w, _ := e.CreateBlob()
	w.Write([]byte("unfinished"))
	e.Close()
	os.WriteFile(filepath.Join(e.Dir(), "foreign.txt"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(e.Dir(), "sub"), 0o755)
	os.WriteFile(filepath.Join(e.Dir(), "manifest.tmp"), []byte("torn"), 0o600)

	e = openEntry(t, root, run, Options{})
	rep := e.Report()
	if rep == nil || rep.Dropped() || len(rep.Items) != 5 {
		t.Fatalf("report: %v", rep)
	}
	if names := dirNames(t, e.Dir()); slices.Contains(names, unnamed.Name) || len(names) != 4 {
		t.Errorf("folder holds %v", names)
	}
	s, err := e.Snapshot()
	if err != nil || checkGen(t, s) != 1 {
		t.Fatal(err)
	}
	s.Close()
	// A reader never removes anything.
	os.WriteFile(filepath.Join(e.Dir(), "foreign.txt"), []byte("x"), 0o600)
	r := openEntry(t, root, run, Options{})
	if r.Writable() || r.Report() != nil || !slices.Contains(dirNames(t, e.Dir()), "foreign.txt") {
		t.Errorf("reader: writable %v, report %v", r.Writable(), r.Report())
	}
}

// TestPermissions: folders 0700, files 0600 whatever the umask; a looser
// folder or file of ours is tightened and said; a folder another user owns
// is refused.
func TestPermissions(t *testing.T) {
	run, root := testRun(t)
	e := openEntry(t, root, run, Options{})
	commitGen(t, e, 1, 1).Close()
	e.Close()
	checkModes(t, root.Path())

	os.Chmod(root.Path(), 0o755)
	os.Chmod(e.Dir(), 0o777)
	os.Chmod(filepath.Join(e.Dir(), manifestName), 0o644)
	root2, err := OpenRoot(root.Path())
	if err != nil {
		t.Fatal(err)
	}
	e = openEntry(t, root2, run, Options{})
	rep := e.Report()
	if rep == nil || rep.Dropped() || len(rep.Items) != 3 {
		t.Fatalf("report: %v", rep)
	}
	for _, it := range rep.Items {
		if it.Action != "tightened" {
			t.Errorf("item %+v", it)
		}
	}
	checkModes(t, root.Path())

	if os.Getuid() != 0 {
		t.Skip("another user's folder: needs root to make one")
	}
	other := filepath.Join(t.TempDir(), "theirs")
	os.Mkdir(other, 0o700)
	os.Chown(other, 65534, 65534)
	if _, err := OpenRoot(other); !errors.Is(err, ErrUnsafe) {
		t.Errorf("another user's root: %v", err)
	}
	os.Chown(e.Dir(), 65534, 65534)
	e.Close()
	if _, err := root2.Open(run, []byte("config"), Options{}); !errors.Is(err, ErrUnsafe) {
		t.Errorf("another user's entry: %v", err)
	}
}

func checkModes(t *testing.T, root string) {
	t.Helper()
	filepath.Walk(root, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %#o, want %#o", path, fi.Mode().Perm(), want)
		}
		return nil
	})
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range ents {
		names = append(names, d.Name())
	}
	return names
}

func sorted(s ...string) []string { slices.Sort(s); return s }

func mustReal(t *testing.T, p string) string {
	t.Helper()
	r, err := RealPath(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPendingBlobs: a blob written and not yet committed is mapped back
// (MapBlob), kept by the writer while it is open, removed by Discard unless
// a commit names it, and one written unsynced is made durable by the commit
// that names it; a blob the entry does not hold is not mapped.
func TestPendingBlobs(t *testing.T) {
	run, root := testRun(t)
	e := openEntry(t, root, run, Options{})
	w, err := e.CreateBlob()
	must(t, err)
	w.Write([]byte("flushed early"))
	early, err := w.CommitUnsynced()
	must(t, err)
	if !e.unsynced[early.Name] {
		t.Fatal("an unsynced blob not marked")
	}
	b, err := e.MapBlob(early)
	must(t, err)
	if got := string(b.Bytes()); got != "flushed early" {
		t.Fatalf("mapped blob reads %q", got)
	}
	gone := writeBlob(t, e, []byte("merged away"))
	e.Discard(gone)
	if names := dirNames(t, e.Dir()); slices.Contains(names, gone.Name) || !slices.Contains(names, early.Name) {
		t.Fatalf("after Discard the folder holds %v", names)
	}
	if _, err := e.MapBlob(gone); err == nil {
		t.Error("a discarded blob mapped")
	}
	forged := early
	forged.Length++
	if _, err := e.MapBlob(forged); err == nil {
		t.Error("a blob of another length mapped")
	}
	s, err := e.Commit([]BlobRef{early}, nil)
	must(t, err)
	if len(e.unsynced) != 0 {
		t.Errorf("the commit left %v unsynced", e.unsynced)
	}
	e.Discard(early) // named by the commit: kept
	if names := dirNames(t, e.Dir()); !slices.Contains(names, early.Name) {
		t.Fatalf("Discard removed a committed blob: %v", names)
	}
	must(t, s.Close())
	// Removing the file leaves the mapping readable; Close unmaps it.
	s, err = e.Commit(nil, nil)
	must(t, err)
	s.Close()
	if got := string(b.Bytes()); got != "flushed early" {
		t.Fatalf("mapped blob reads %q after its file went", got)
	}
	must(t, b.Close())
	must(t, e.Close())
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestCallerOnDisk: with Options.CallerOnDisk an entry holds no copy of its
// caller section, neither of the commit it opened nor of one it wrote (a
// server's 100,000-file table is 8 MB, issue 33), and Snapshot.Caller
// reads it from the manifest; an old snapshot's, once replaced, is an
// error, never the later commit's.
func TestCallerOnDisk(t *testing.T) {
	run, root := testRun(t)
	const size = 8 << 20
	big := bytes.Repeat([]byte("file table "), size/11)
	e := openEntry(t, root, run, Options{CallerOnDisk: true})
	s1, err := e.Commit(nil, big)
	must(t, err)
	heldBy := func(what string, hold any) {
		t.Helper()
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		if ms.HeapAlloc > size/2 {
			t.Errorf("%s: %d bytes of the heap live, its caller section is %d", what, ms.HeapAlloc, size)
		}
		runtime.KeepAlive(hold)
	}
	big = nil
	heldBy("a commit written", []any{e, s1})
	if got, err := s1.Caller(); err != nil || len(got) != size/11*11 || !bytes.HasPrefix(got, []byte("file table file")) {
		t.Fatalf("caller read back: %d bytes, %v", len(got), err)
	}
	s1.Close()
	e.Close()

	// Nor does the open allocate it, to drop it: the manifest's caller
	// section is read through a buffer for its checksum (it read the file
	// and a clone of the section, 16 MB at 100,000 files, issue 33).
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	e = openEntry(t, root, run, Options{CallerOnDisk: true})
	s, err := e.Snapshot()
	must(t, err)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > size/8 {
		t.Errorf("a commit opened: %d bytes allocated, its caller section is %d", n, size)
	}
	heldBy("a commit opened", []any{e, s})
	if got, err := s.Caller(); err != nil || len(got) != size/11*11 {
		t.Fatalf("caller read back: %d bytes, %v", len(got), err)
	}
	s2, err := e.Commit(nil, []byte("later"))
	must(t, err)
	if got, err := s.Caller(); err == nil {
		t.Errorf("a replaced commit's caller: %q, no error", got[:min(len(got), 20)])
	}
	if got, err := s2.Caller(); err != nil || string(got) != "later" {
		t.Errorf("the later commit's caller: %q, %v", got, err)
	}
	s.Close()
	s2.Close()
}
