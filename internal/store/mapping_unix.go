//go:build unix

// This file maps a blob read-only into memory: its pages are page cache the
// kernel can reclaim, not the process's heap.

package store

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

const canMap = true

// mapFile maps the whole of f read-only and shared: one page past a
// hugeSize boundary (mapShifted), or, aligned, at one.
func mapFile(f *os.File, size int64, aligned bool) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	if size != int64(int(size)) {
		return nil, fmt.Errorf("store: map %s: %d bytes", f.Name(), size)
	}
	shift := uintptr(pageSize)
	if aligned {
		shift = 0
	}
	addr, err := mapShifted(int(f.Fd()), uintptr(size), shift)
	if err != nil {
		return nil, &os.PathError{Op: "mmap", Path: f.Name(), Err: err}
	}
	return unsafe.Slice((*byte)(addr), int(size)), nil
}

// mapShifted maps fd's first n bytes at an address shift bytes past a
// hugeSize boundary, when n is that large. Linux (6.x, ext4) keeps a
// recently written file's page cache in folios of up to 2 MB, and a read of
// one byte of a mapping whose addresses line up with the file's offsets
// (as the kernel lays out a large file mapping) maps the whole folio: a
// reopen that reads a few bytes of each of the entry's blobs had some 400
// MB of them in its resident memory at 1 GB. Shifted by a page, no folio
// can be mapped whole, and a read maps the pages around it only (the
// kernel's fault-around, 64 KiB): what a command that reopens, answers and
// exits wants (ReadMap). A server that answers for hours wants the folios
// mapped whole (ReadMapAligned, shift 0): one page-table entry for 2 MB, so
// that its searches, which read a few bytes at random across the entry,
// miss the TLB less (docs/cache.md).
func mapShifted(fd int, n, shift uintptr) (unsafe.Pointer, error) {
	plain := func() (unsafe.Pointer, error) {
		return unix.MmapPtr(fd, 0, nil, n, unix.PROT_READ, unix.MAP_SHARED)
	}
	if n < hugeSize {
		return plain()
	}
	span := n + hugeSize + shift
	res, err := unix.MmapPtr(-1, 0, nil, span, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return plain()
	}
	off := (hugeSize-uintptr(res)%hugeSize)%hugeSize + shift
	addr, err := unix.MmapPtr(fd, 0, unsafe.Add(res, off), n, unix.PROT_READ, unix.MAP_SHARED|unix.MAP_FIXED)
	if err != nil {
		_ = unix.MunmapPtr(res, span)
		return plain()
	}
	// Let go of the reserved space around the mapping.
	end := off + uintptr(roundPage(int(n)))
	if off > 0 {
		_ = unix.MunmapPtr(res, off)
	}
	if end < span {
		_ = unix.MunmapPtr(unsafe.Add(res, end), span-end)
	}
	return addr, nil
}

func unmapFile(data []byte) error {
	if data == nil {
		return nil
	}
	return unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(data)), uintptr(len(data)))
}

// dropPages lets the process's pages of a mapping go (MADV_DONTNEED): a
// shared read-only mapping's pages stay in the page cache, and a later
// read maps them again. syscall has Madvise on Linux only; x/sys/unix has
// it on every unix this package maps on (on macOS it is a hint the kernel
// may take later).
func dropPages(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	return unix.Madvise(data, unix.MADV_DONTNEED)
}
