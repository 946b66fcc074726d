//go:build linux

package runfs

// This file holds the lock a barrier's process keeps on its file, by which
// a later process tells a folder left behind from one in use.

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockBarrier locks f for as long as it is open: the kernel lets go of the
// lock when the process dies, however it dies.
func lockBarrier(f *os.File) error {
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
}

// whenUnlocked runs remove while holding path's lock when no one else
// holds it. A lock taken through another open file conflicts even within
// one process on a local file system, so a live barrier of this process is
// not taken for a dead one (and removeStale spares its own by name).
func whenUnlocked(path string, remove func()) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
		remove()
	}
}
