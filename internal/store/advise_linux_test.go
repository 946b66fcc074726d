package store

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A blob mapped by a snapshot reads, from a cold page cache, the chunks a
// check asks for and the pages a read touches, not the readahead window
// around a fault (advise_linux.go): a 10 GB run's reopen, its entry out of
// the page cache, read 4.7 GB of the 5.2 GB entry from the disk for an
// answer that touched some 0.6 GB. The mapping carries the advice
// (VmFlags "rr" in /proc/self/smaps), and after one chunk checked and read
// in the middle of a 32 MB blob evicted from the page cache, at most
// maxResident of the file is in the page cache (a device readahead window
// of 8 MB read 8 MB).
func TestMappedBlobReadsNoReadaheadWindow(t *testing.T) {
	const size, maxResident = 32 << 20, 1 << 20
	b, path := reopenedBlob(t, 3, size, maxResident)
	if flags := vmFlags(t, uintptrOf(b.file)); !strings.Contains(" "+flags+" ", " rr ") {
		t.Errorf("the blob's mapping has VmFlags %q, want rr (MADV_RANDOM)", flags)
	}
	off := int64(size / 2)
	must(t, b.CheckRange(off, 100))
	var got byte
	must(t, b.Access(func(c []byte) error { got = c[off+50]; return nil }))
	if want := genContent(3, 0, size)[off+50]; got != want {
		t.Fatalf("read %d, want %d", got, want)
	}
	if n := residentBytes(t, path); n > maxResident {
		t.Errorf("one chunk checked and one byte read brought %d bytes of the blob into the page cache, want at most %d", n, maxResident)
	}
}

// evict drops path's pages from the page cache (they are clean: the blob
// was synced at its commit).
func evict(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	must(t, unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED))
}

// residentBytes is how much of path is in the page cache (mincore on a
// mapping of its own, which reads nothing).
func residentBytes(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	fi, err := f.Stat()
	must(t, err)
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	must(t, err)
	defer unix.Munmap(m)
	vec := make([]byte, (len(m)+pageSize-1)/pageSize)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n * pageSize
}

// vmFlags is the VmFlags line of the mapping that starts at addr, from
// /proc/self/smaps.
func vmFlags(t *testing.T, addr uintptr) string {
	t.Helper()
	return smapsField(t, addr, "VmFlags:")
}

// smapsField is the value of the mapping's field key (with its colon) that
// starts at addr, from /proc/self/smaps.
func smapsField(t *testing.T, addr uintptr, key string) string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	start := fmt.Sprintf("%x-", addr)
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) > 0 && !strings.HasSuffix(f[0], ":") { // a mapping's first line
			in = strings.HasPrefix(line, start)
			continue
		}
		if in && strings.HasPrefix(line, key) {
			return strings.TrimSpace(strings.TrimPrefix(line, key))
		}
	}
	t.Fatalf("no mapping at %#x in /proc/self/smaps", addr)
	return ""
}

// A blob checked whole (the dictionary and statistics at a reopen) is read
// with the readahead on (from its file, Blob.Verify; through its mapping,
// Blob.readWhole, when the file is gone): from a cold page cache, a 32 MB
// blob checked takes a few major faults, not one a page (8,192; a 10 GB
// reopen's 137 MB dictionary took some 38,000).
func TestMappedBlobCheckedWholeReadsAhead(t *testing.T) {
	const size = 32 << 20
	b, _ := reopenedBlob(t, 4, size, size/4)
	runtime.LockOSThread() // the faults are counted for this thread
	defer runtime.UnlockOSThread()
	before := majorFaults(t)
	must(t, b.Check())
	if n, most := majorFaults(t)-before, int64(size/pageSize/8); n > most {
		t.Errorf("checking a cold %d-byte blob whole took %d major faults, want at most %d", size, n, most)
	}
}

// majorFaults is the calling thread's major page faults so far.
func majorFaults(t *testing.T) int64 {
	t.Helper()
	var ru unix.Rusage
	must(t, unix.Getrusage(unix.RUSAGE_THREAD, &ru))
	return ru.Majflt
}

// A mapped blob checked whole is read from its file, not its mapping
// (Blob.Verify): a pass over the mapping would make all its pages the
// process's (RSS) where its reader looks at a few. The 1 GB run's `runls
// search` reopen so went from 139 to 123 MB of peak RSS (the dictionary's
// and statistics' 11 MB each). After a 32 MB blob is checked, at most 1 MB
// of its mapping is resident in the process.
func TestMappedBlobCheckedWholeLeavesItsMapping(t *testing.T) {
	const size, most = 32 << 20, 1 << 20
	b, _ := reopenedBlob(t, 5, size, -1)
	must(t, b.Check())
	var kb int
	if _, err := fmt.Sscanf(smapsField(t, uintptrOf(b.file), "Rss:"), "%d kB", &kb); err != nil {
		t.Fatalf("the mapping's Rss: %v", err)
	}
	if kb<<10 > most {
		t.Errorf("checking a %d-byte blob whole made %d kB of its mapping resident, want at most %d", size, kb, most>>10)
	}
}

// reopenedBlob commits one blob of size bytes (genContent's seed), and
// gives it, with its file's path, from a snapshot of the entry opened again
// (VerifyFrame), closed when the test ends. With cold >= 0 the blob is
// evicted from the page cache first, and the test skipped when more than
// cold bytes of it stay there.
func reopenedBlob(t *testing.T, seed uint64, size, cold int) (*Blob, string) {
	t.Helper()
	run, root := testRun(t)
	e := openEntry(t, root, run, Options{Verify: VerifyFrame})
	ref := writeBlob(t, e, genContent(seed, 0, size))
	s, err := e.Commit([]BlobRef{ref}, nil)
	must(t, err)
	must(t, s.Close())
	must(t, e.Close())
	path := filepath.Join(e.Dir(), ref.Name)
	if cold >= 0 {
		evict(t, path)
		if n := residentBytes(t, path); n > cold {
			t.Skipf("the blob's pages stay in the page cache after POSIX_FADV_DONTNEED (%d bytes; tmpfs?)", n)
		}
	}
	e = openEntry(t, root, run, Options{Verify: VerifyFrame})
	s, err = e.Snapshot()
	must(t, err)
	t.Cleanup(func() { s.Close() })
	return s.Blobs()[0], path
}
