package persist

// This file holds the copies a reopen's file states keep of the state
// blob's columns (persist_codec.go says why they are copies): at 1 GB some
// 88 MB of record tables and line indexes, written into memory the process
// has never touched. Made naively (slices.Clone) each 4 KiB page of it is
// a fault of its own taken inside one long memmove, and a collection that
// starts meanwhile (the heap grows from nothing) spins on the other core
// until the memmove ends, since it cannot stop the goroutine inside it to
// scan its stack: at 1 GB the faults were a quarter of the reopen's CPU and
// the spin a tenth. So the copy's pages are made present in one call
// (prefault) and it is made in pieces between which the goroutine can be
// stopped.

import "unsafe"

// keepChunk is how many bytes keep copies between two points where the
// collector may stop the goroutine.
const keepChunk = 256 << 10

// keep returns a copy of s in memory of its own, len == cap (an append
// copies), nil for nil, as slices.Clone does.
func keep[T any](s []T) []T {
	if s == nil {
		return nil
	}
	out := make([]T, len(s))
	if len(s) == 0 {
		return out
	}
	size := int(unsafe.Sizeof(s[0]))
	prefault(unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), len(out)*size))
	step := max(1, keepChunk/max(size, 1))
	for i := 0; i < len(s); i += step {
		copy(out[i:], s[i:min(i+step, len(s))])
	}
	return out
}
