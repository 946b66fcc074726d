//go:build unix

package store

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"
)

// A file of hugeSize or more is mapped one page past a hugeSize boundary,
// so that no read maps a 2 MB page-cache folio whole (mapShifted), or,
// aligned, at one; a smaller one where the kernel puts it. Either reads
// back as written, and unmaps.
func TestMapShiftedOffHugeBoundary(t *testing.T) {
	for _, aligned := range []bool{false, true} {
		t.Run(map[bool]string{false: "shifted", true: "aligned"}[aligned], func(t *testing.T) { testMapShifted(t, aligned) })
	}
}

func testMapShifted(t *testing.T, aligned bool) {
	want := uintptr(pageSize)
	if aligned {
		want = 0
	}
	for _, size := range []int{4096, hugeSize - 1, hugeSize, 3*hugeSize + 5} {
		data := genContent(7, size, size)
		p := filepath.Join(t.TempDir(), "f")
		must(t, os.WriteFile(p, data, 0o600))
		f, err := os.Open(p)
		must(t, err)
		m, err := mapFile(f, int64(size), aligned)
		must(t, err)
		must(t, f.Close())
		if !bytes.Equal(m, data) {
			t.Fatalf("%d bytes: the mapping reads other bytes", size)
		}
		at := uintptr(unsafe.Pointer(unsafe.SliceData(m))) % hugeSize
		if size >= hugeSize && at != want {
			t.Errorf("%d bytes mapped at %#x past a %d-byte boundary, want %#x", size, at, hugeSize, want)
		}
		must(t, unmapFile(m))
	}
}
