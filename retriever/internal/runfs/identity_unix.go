//go:build unix

// This file reads a file's identity and link count from what stat gives
// on a unix system.

package runfs

import (
	"io/fs"
	"syscall"
)

// FileID is a file's device and inode (0, 0 where the system does not tell).
func FileID(info fs.FileInfo) (dev, ino uint64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino
	}
	return 0, 0
}

// Links returns a file's link count (1 where the system does not tell).
func Links(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
