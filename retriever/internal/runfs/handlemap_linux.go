package runfs

// This file holds the mapping of a read-back handle's file on Linux
// (Handle.ReadMapped).

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapsFiles says that this system maps a handle's file (the tests'
// check that a read was the mapping's).
const mapsFiles = true

// maxMapped bounds the size of a file mapped for its read-backs: a larger
// one is read with pread (a mapping is address space, not memory, but a
// search reads a line or a few of a file).
const maxMapped = 1 << 36

// mapFile maps the first size bytes of f for reading, nil when it cannot
// (an empty file, one too large, or a mapping refused: its reads are
// preads).
func mapFile(f *os.File, size int64) []byte {
	if size <= 0 || size > maxMapped {
		return nil
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil
	}
	return m
}

// unmapFile undoes mapFile (nil: nothing).
func unmapFile(m []byte) {
	if m != nil {
		_ = unix.Munmap(m) // only an address range not mapped fails, which m is not
	}
}
