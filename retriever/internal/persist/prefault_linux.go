package persist

// This file makes a fresh heap copy's pages present before it is written
// (keep.go says why), on Linux.

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// prefault asks the kernel to make the whole pages inside b present and
// writable in one call (MADV_POPULATE_WRITE, Linux 5.14): what writing
// each page would do, without a fault a page. Only a hint: b's content is
// unchanged, and a kernel without it (EINVAL) leaves the pages to their
// faults.
func prefault(b []byte) {
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (start + page - 1) &^ (page - 1)
	hi := (start + uintptr(len(b))) &^ (page - 1)
	if hi <= lo {
		return
	}
	_ = unix.Madvise(b[lo-start:hi-start], unix.MADV_POPULATE_WRITE)
}
