//go:build unix

// This file reads a file's link count, where the system keeps one.

package rungen

import (
	"os"
	"syscall"
)

// linkCount returns fi's number of hard links, and whether it is known.
func linkCount(fi os.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Nlink), true
}
