// This file holds the page arithmetic of the mappings and the fault guard.

package store

import (
	"os"
	"unsafe"
)

var pageSize = os.Getpagesize()

func roundPage(n int) int { return (n + pageSize - 1) &^ (pageSize - 1) }

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// hugeSize is the size of the page-cache folios a read maps whole when the
// mapping's addresses line up with them (a PMD on x86-64 and arm64;
// mapping_unix.go).
const hugeSize = 2 << 20
