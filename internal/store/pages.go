// This file holds the address arithmetic the fault guard needs.

package store

import (
	"os"
	"unsafe"
)

var pageSize = os.Getpagesize()

func roundPage(n int) int { return (n + pageSize - 1) &^ (pageSize - 1) }

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
