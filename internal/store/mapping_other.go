//go:build !unix

// This file stands in for mapping where syscall.Mmap is missing: blobs are
// read onto the heap (Options.Read = ReadHeap is the only mode).

package store

import (
	"errors"
	"os"
)

const canMap = false

func mapFile(f *os.File, size int64, aligned bool) ([]byte, error) {
	return nil, errors.New("store: no mmap on this system")
}

func unmapFile(data []byte) error { return nil }

// dropPages has nothing to let go: the blob is a heap copy.
func dropPages([]byte) error { return nil }
