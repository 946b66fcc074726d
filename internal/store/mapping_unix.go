//go:build unix

// This file maps a blob read-only into memory: its pages are page cache the
// kernel can reclaim, not the process's heap.

package store

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

const canMap = true

// mapFile maps the whole of f read-only and shared.
func mapFile(f *os.File, size int64) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	if size != int64(int(size)) {
		return nil, fmt.Errorf("store: map %s: %d bytes", f.Name(), size)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, &os.PathError{Op: "mmap", Path: f.Name(), Err: err}
	}
	return data, nil
}

func unmapFile(data []byte) error {
	if data == nil {
		return nil
	}
	return syscall.Munmap(data)
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
