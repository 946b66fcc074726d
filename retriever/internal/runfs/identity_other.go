//go:build !unix

// This file stands in for identity_unix.go where stat tells no device,
// inode or link count (Windows): a file is then known by its path, size
// and times alone.

package runfs

import "io/fs"

// FileID is a file's device and inode: 0, 0, the system does not tell.
func FileID(fs.FileInfo) (dev, ino uint64) { return 0, 0 }

// Links returns a file's link count: 1, the system does not tell.
func Links(fs.FileInfo) uint64 { return 1 }
